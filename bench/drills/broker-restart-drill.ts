import { setTimeout as sleep } from 'node:timers/promises';
import type { Producer } from '../../src/transport/transport.js';
import { transportFor } from '../transport-for.js';
import { AnswerLedger } from './answer-ledger.js';
import { drillTopics, type DrillContext } from './drill-context.js';
import { OwnBroker } from '../own-broker.js';
import { drillResult, type DrillResult } from './drill-result.js';
import { SLOW_ECHO_FILES, slowEchoService } from './drill-tools.js';
import { DrillWorker } from './drill-worker.js';

export interface BrokerRestartDrillOptions {
  readonly requests: number;
  /** Agents each with one request in flight. */
  readonly concurrency: number;
  readonly toolDelayMs: number;
  /** Stop the broker once this share of the answers has arrived. */
  readonly stopAfter: number;
  /** How long the broker stays down before it is started again. */
  readonly downMs: number;
}

export const RESTART_DRILL = {
  short: { requests: 300, concurrency: 16, toolDelayMs: 5, stopAfter: 0.3, downMs: 2_000 },
  long: { requests: 5_000, concurrency: 64, toolDelayMs: 5, stopAfter: 0.3, downMs: 5_000 },
} as const;

/**
 * Stop and restart the broker under load. Agents keep sending (a send waits out the outage
 * and is retried if it fails); the worker reconnects and the broker redelivers what it had
 * not acked. Rule: every request the broker confirmed gets its answer. Request and response
 * topics are persistent, and the agents' subscription durable: that is what "lose nothing"
 * takes on Pulsar (a non-persistent topic drops whatever is in flight when a broker goes).
 */
export async function brokerRestartDrill(ctx: DrillContext, o: BrokerRestartDrillOptions): Promise<DrillResult> {
  const started = Date.now();
  ctx.say("broker-restart: starting a broker of the drill's own (scripts/pulsar-broker.sh, own run dir and ports)");
  const broker = await OwnBroker.start(ctx.signal);
  const topics = drillTopics('restart', true);
  const { id, requestTopic, responseTopic } = topics;
  let worker: DrillWorker | undefined;
  let agent: Awaited<ReturnType<typeof transportFor>> | undefined;
  let ledger: AnswerLedger | undefined;
  try {
    worker = await DrillWorker.create({
      transport: ctx.transport,
      broker: broker.endpoints,
      log: ctx.log,
      services: [slowEchoService(topics, o.concurrency)],
      modules: SLOW_ECHO_FILES,
      env: { TOOLWIRE_CONCURRENCY: String(o.concurrency), TOOLWIRE_NACK_DELAY_MS: '200' },
    });
    await worker.start(ctx.signal);
    agent = await transportFor(ctx.transport, broker.endpoints, ctx.log);
    ledger = await AnswerLedger.open(agent, responseTopic, `${id}-agent`);
    const producer = await agent.producer(requestTopic, ctx.signal);
    ctx.say(`broker-restart: ${broker.endpoints.adminUrl}, ${worker.launcher.description}; ${o.requests} requests by ${o.concurrency} agents`);

    const counts = { published: 0, sendRetries: 0 };
    let next = 0;
    const l = ledger;
    const agentLane = async (): Promise<void> => {
      while (next < o.requests && !ctx.signal.aborted) {
        const rid = `${id}-${next++}`;
        l.track(rid);
        await publish(producer, rid, o.toolDelayMs, counts, ctx.signal);
        await Promise.race([l.whenAnswered(rid), sleep(600_000)]);
      }
    };
    const lanes = Promise.all(Array.from({ length: o.concurrency }, agentLane));

    const stopAt = Math.max(1, Math.floor(o.requests * o.stopAfter));
    await ledger.waitFor(() => l.counts().answered >= stopAt, 300_000, ctx.signal);
    const answeredBeforeStop = ledger.counts().answered;
    const stopBegan = Date.now();
    await broker.stop();
    const stopMs = Date.now() - stopBegan;
    ctx.say(`broker-restart: broker stopped with ${answeredBeforeStop}/${o.requests} answered (took ${stopMs} ms); down for ${o.downMs} ms`);
    await sleep(o.downMs);
    const startBegan = Date.now();
    await broker.startAgain(ctx.signal);
    const brokerStartMs = Date.now() - startBegan;
    ctx.say(`broker-restart: broker back after ${brokerStartMs} ms; waiting for every answer`);
    await Promise.race([lanes, sleep(600_000)]);
    await ledger.waitFor(() => l.counts().missing === 0, 120_000, ctx.signal).catch(() => undefined);
    const recoveryMs = Date.now() - startBegan;
    await sleep(1_000);
    const stats = await worker.stop();
    const c = ledger.counts();
    const wrong = [...Array(o.requests).keys()].filter((i) => {
      const a = l.answer(`${id}-${i}`);
      return a !== undefined && (a.final.error !== null || a.text !== `${id}-${i}`);
    }).length;
    const passed = c.missing === 0 && wrong === 0 && counts.published === o.requests && answeredBeforeStop < o.requests;
    return drillResult(
      'broker-restart',
      ctx.form,
      started,
      'every request the broker confirmed gets a correct final answer across a broker stop and restart; the stop lands mid-run',
      passed,
      {
        requests: o.requests,
        published: counts.published,
        sendRetries: counts.sendRetries,
        answered: c.answered,
        missing: c.missing,
        wrongAnswers: wrong,
        duplicates: c.duplicates,
        answeredBeforeStop,
        workerReceived: stats?.received ?? -1,
        workerNacked: stats?.nacked ?? -1,
      },
      { brokerStopMs: stopMs, brokerStartMs, recoveryMsAfterStart: recoveryMs },
      [worker.launcher.description, ...(c.missing > 0 ? [`missing ids (first 5): ${ledger.missingIds().slice(0, 5).join(', ')}`] : [])],
    );
  } finally {
    await ledger?.close().catch(() => undefined);
    await agent?.close().catch(() => undefined);
    await worker?.remove();
    await broker.destroy();
  }
}

/** Publish until the broker confirms; a failed send (outage longer than the send timeout) is sent again. */
async function publish(
  producer: Producer,
  rid: string,
  delayMs: number,
  counts: { published: number; sendRetries: number },
  signal: AbortSignal,
): Promise<void> {
  const data = JSON.stringify({ config: '{}', arguments: JSON.stringify({ text: rid, delay_ms: delayMs }) });
  for (;;) {
    try {
      await producer.send({ data, properties: { id: rid } });
      counts.published++;
      return;
    } catch (err) {
      if (signal.aborted) throw err;
      counts.sendRetries++;
      await sleep(1_000);
    }
  }
}
