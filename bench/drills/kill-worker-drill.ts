import { transportFor } from '../transport-for.js';
import { AnswerLedger } from './answer-ledger.js';
import { drillTopics, removeTopics, sendAll, type DrillContext } from './drill-context.js';
import { drillResult, type DrillResult } from './drill-result.js';
import { SLOW_ECHO_FILES, slowEchoService } from './drill-tools.js';
import { DrillWorker } from './drill-worker.js';

export interface KillWorkerDrillOptions {
  /** Requests published before the kill (1,000 long, ~200 short). */
  readonly requests: number;
  /** Each takes this long in the tool, so many are in the worker's hands at the kill. */
  readonly toolDelayMs: number;
  readonly concurrency: number;
  /** Kill once this share of the answers has arrived. */
  readonly killAfter: number;
}

export const KILL_DRILL = {
  short: { requests: 200, toolDelayMs: 50, concurrency: 64, killAfter: 0.2 },
  long: { requests: 1000, toolDelayMs: 50, concurrency: 64, killAfter: 0.2 },
} as const;

/**
 * kill -9 the worker with requests in flight on a persistent request topic, start another:
 * every request must get a final answer. The broker redelivers what the dead worker took
 * and did not ack; whatever it answered but had not acked yet is answered twice, and
 * counted as a duplicate (at-least-once). Responses go to a persistent topic with a durable
 * agent subscription, so only the worker's side is on trial.
 */
export async function killWorkerDrill(ctx: DrillContext, o: KillWorkerDrillOptions): Promise<DrillResult> {
  const started = Date.now();
  const topics = drillTopics('kill', true);
  const { id, requestTopic, responseTopic } = topics;
  const worker = await DrillWorker.create({
    transport: ctx.transport,
    broker: ctx.broker,
    log: ctx.log,
    services: [slowEchoService(topics, o.concurrency)],
    modules: SLOW_ECHO_FILES,
    env: { TOOLWIRE_CONCURRENCY: String(o.concurrency) },
  });
  const agent = await transportFor(ctx.transport, ctx.broker, ctx.log);
  const ledger = await AnswerLedger.open(agent, responseTopic, `${id}-agent`);
  try {
    await worker.start(ctx.signal);
    ctx.say(`kill-worker: ${worker.launcher.description}; publishing ${o.requests} requests`);
    const producer = await agent.producer(requestTopic, ctx.signal);
    const ids = Array.from({ length: o.requests }, (_, i) => `${id}-${i}`);
    for (const rid of ids) ledger.track(rid);
    const sendFailures = await sendAll(ids, (rid) =>
      producer.send({ data: JSON.stringify({ config: '{}', arguments: JSON.stringify({ text: rid, delay_ms: o.toolDelayMs }) }), properties: { id: rid } }),
    );
    const killAt = Math.max(1, Math.floor(o.requests * o.killAfter));
    await ledger.waitFor(() => ledger.counts().answered >= killAt, 120_000, ctx.signal);
    await worker.kill();
    const killedAt = Date.now();
    const answeredBeforeKill = ledger.counts().answered;
    ctx.say(`kill-worker: killed -9 with ${answeredBeforeKill}/${o.requests} answered; starting a new worker`);
    await worker.start(ctx.signal);
    const restartMs = Date.now() - killedAt;
    const deadline = 60_000 + Math.ceil((o.requests * o.toolDelayMs) / o.concurrency) * 4;
    await ledger.waitFor(() => ledger.counts().missing === 0, deadline, ctx.signal).catch(() => undefined);
    const recoveryMs = Date.now() - killedAt;
    // Late duplicates: give redelivered copies a moment to show up before counting.
    await new Promise((r) => setTimeout(r, 1_000));
    const stats = await worker.stop();
    const c = ledger.counts();
    const wrong = ids.filter((rid) => {
      const a = ledger.answer(rid);
      return a !== undefined && (a.final.error !== null || a.text !== rid);
    }).length;
    const passed = c.missing === 0 && wrong === 0 && sendFailures === 0 && answeredBeforeKill < o.requests;
    return drillResult(
      'kill-worker',
      ctx.form,
      started,
      'every request published before the kill gets a correct final answer after kill -9 and a restart; the kill lands while requests are in flight',
      passed,
      {
        sent: o.requests,
        sendFailures,
        answered: c.answered,
        missing: c.missing,
        wrongAnswers: wrong,
        duplicates: c.duplicates,
        answeredBeforeKill,
        answeredAfterKill: c.answered - answeredBeforeKill,
        restartedWorkerReceived: stats?.received ?? -1,
        restartedWorkerAnswered: stats?.answered ?? -1,
      },
      { restartMs, recoveryMs },
      [worker.launcher.description, ...(c.missing > 0 ? [`missing ids (first 5): ${ledger.missingIds().slice(0, 5).join(', ')}`] : [])],
    );
  } finally {
    await ledger.close().catch(() => undefined);
    await agent.close().catch(() => undefined);
    await worker.remove();
    await removeTopics(ctx.broker, [requestTopic, responseTopic]);
  }
}
