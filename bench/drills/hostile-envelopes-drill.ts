import { randomUUID } from 'node:crypto';
import { persistentTopic } from '../../src/transport/topic-name.js';
import { defaultDeadLetterTopic } from '../../src/transport/transport.js';
import { transportFor } from '../transport-for.js';
import { AnswerLedger } from './answer-ledger.js';
import { drillTopics, removeTopics, sendAll, type DrillContext } from './drill-context.js';
import { drillResult, type DrillResult } from './drill-result.js';
import { DrillWorker } from './drill-worker.js';
import { hostileMix } from './hostile-envelopes.js';

export interface HostileDrillOptions {
  readonly total: number;
  readonly seed: number;
  readonly maxPayloadBytes: number;
  /** Bound on the worker's RSS growth over the drill (the "bounded memory" rule). */
  readonly maxRssGrowthBytes: number;
  /** Requests on a non-persistent topic, TrustGraph's default (responses stay persistent, to count them all). */
  readonly nonPersistentRequests?: boolean;
}

export const HOSTILE_DRILL = {
  short: { total: 1_000, seed: 5, maxPayloadBytes: 256 * 1024, maxRssGrowthBytes: 256 * 2 ** 20 },
  long: { total: 10_000, seed: 5, maxPayloadBytes: 256 * 1024, maxRssGrowthBytes: 256 * 2 ** 20 },
} as const;

/**
 * Malformed and hostile envelopes mixed with good ones, against the real worker and its
 * builtin echo. Every good one must be answered with its text; every bad one with an id,
 * with an error of the expected type; every id-less one dead-lettered to
 * `<request topic>-<subscription>-DLQ`; and the worker must still be up, answering, with its
 * RSS growth under a bound.
 */
export async function hostileEnvelopesDrill(ctx: DrillContext, o: HostileDrillOptions): Promise<DrillResult> {
  const started = Date.now();
  const { id, requestTopic, responseTopic } = drillTopics(o.nonPersistentRequests ? 'hostile-np' : 'hostile', true, !o.nonPersistentRequests);
  const subscription = `${id}-request`;
  // The worker dead-letters to a persistent topic even from a non-persistent request topic.
  const dlqTopic = persistentTopic(defaultDeadLetterTopic(requestTopic, subscription));
  const worker = await DrillWorker.create({
    transport: ctx.transport,
    broker: ctx.broker,
    log: ctx.log,
    services: [
      {
        id,
        requestQueue: requestTopic,
        responseQueue: responseTopic,
        module: 'builtin:echo',
        concurrency: 64,
        tools: [
          {
            name: `${id}-echo`,
            arguments: [
              { name: 'text', type: 'string' },
              { name: 'chunks', type: 'number' },
            ],
          },
        ],
      },
    ],
    env: { TOOLWIRE_MAX_PAYLOAD_BYTES: String(o.maxPayloadBytes), TOOLWIRE_CONCURRENCY: '64' },
  });
  const agent = await transportFor(ctx.transport, ctx.broker, ctx.log);
  const ledger = await AnswerLedger.open(agent, responseTopic, `${id}-agent`, Math.max(1000, o.total));
  // Subscribed before anything is sent, so the DLQ's subscription sees every dead letter.
  const dlq = await agent.subscribe({ topic: dlqTopic, subscription: `${id}-dlq-reader`, type: 'Exclusive', receiverQueueSize: 1000 });
  const deadLettered = new Set<string>();
  const dlqLoop = (async () => {
    for await (const m of dlq) {
      void m.ack();
      const seq = m.properties['drill-seq'];
      if (seq !== undefined) deadLettered.add(seq);
    }
  })();
  try {
    await worker.start(ctx.signal);
    const envelopes = hostileMix({ total: o.total, seed: o.seed, maxPayloadBytes: o.maxPayloadBytes, idPrefix: id });
    const byCategory: Record<string, number> = {};
    for (const e of envelopes) {
      byCategory[e.category] = (byCategory[e.category] ?? 0) + 1;
      if (e.properties['id']) ledger.track(e.properties['id']);
    }
    ctx.say(
      `hostile-envelopes: ${worker.launcher.description}; sending ${envelopes.length} (${Object.entries(byCategory)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
    );
    const producer = await agent.producer(requestTopic, ctx.signal);
    const sendFailures = await sendAll(envelopes, (e) => producer.send({ data: e.data, properties: e.properties }));
    const expectedDead = envelopes.filter((e) => e.expect.kind === 'dead-letter').length;
    await ledger.waitFor(() => ledger.counts().missing === 0 && deadLettered.size >= expectedDead, 120_000 + o.total * 20, ctx.signal).catch(() => undefined);

    // Still up and answering after all that?
    const probeId = `${id}-probe-${randomUUID()}`;
    ledger.track(probeId);
    await producer.send({ data: JSON.stringify({ config: '{}', arguments: JSON.stringify({ text: 'still here' }) }), properties: { id: probeId } });
    await ledger.waitFor(() => ledger.answer(probeId) !== undefined, 30_000, ctx.signal).catch(() => undefined);
    const alive = worker.process?.running === true && ledger.answer(probeId)?.text === 'still here';

    let goodOk = 0;
    let goodWrong = 0;
    let badAnswered = 0;
    let badWrongType = 0;
    let unanswered = 0;
    let deadLetterMissing = 0;
    const wrongTypes: string[] = [];
    for (const e of envelopes) {
      if (e.expect.kind === 'dead-letter') {
        if (!deadLettered.has(String(e.seq))) deadLetterMissing++;
        continue;
      }
      const a = ledger.answer(e.properties['id']!);
      if (!a) {
        unanswered++;
        continue;
      }
      if (e.expect.kind === 'answer') {
        if (a.final.error === null && a.text === e.expect.text) goodOk++;
        else goodWrong++;
      } else if (a.final.error !== null && a.final.error.type === e.expect.type) {
        badAnswered++;
      } else {
        badWrongType++;
        if (wrongTypes.length < 5) wrongTypes.push(`${e.category}: expected ${e.expect.type}, got ${a.final.error ? a.final.error.type : 'a success'}`);
      }
    }
    const rss = worker.rss();
    const rssStart = rss[0] ?? 0;
    const rssMax = Math.max(0, ...rss);
    const rssEnd = rss[rss.length - 1] ?? 0;
    const stats = await worker.stop();
    const c = ledger.counts();
    const good = envelopes.filter((e) => e.expect.kind === 'answer').length;
    const bad = envelopes.filter((e) => e.expect.kind === 'error').length;
    const passed =
      sendFailures === 0 &&
      goodOk === good &&
      badAnswered === bad &&
      deadLetterMissing === 0 &&
      unanswered === 0 &&
      alive &&
      rssMax - rssStart <= o.maxRssGrowthBytes;
    return drillResult(
      'hostile-envelopes',
      ctx.form,
      started,
      'every good envelope answered with its text, every bad one with an id answered with the expected error type, every id-less one dead-lettered; the worker still answers and its RSS grows less than the bound',
      passed,
      {
        sent: envelopes.length,
        sendFailures,
        good,
        goodAnsweredCorrectly: goodOk,
        goodWrong,
        badWithId: bad,
        badAnsweredWithExpectedError: badAnswered,
        badWrongErrorType: badWrongType,
        unanswered,
        idLess: expectedDead,
        deadLettered: deadLettered.size,
        deadLetterMissing,
        duplicates: c.duplicates,
        workerAlive: alive ? 1 : 0,
        workerDeadLetteredStat: stats?.deadLettered ?? -1,
        ...Object.fromEntries(Object.entries(byCategory).map(([k, v]) => [`category:${k}`, v])),
      },
      { rssStartMb: rssStart / 2 ** 20, rssMaxMb: rssMax / 2 ** 20, rssEndMb: rssEnd / 2 ** 20 },
      [worker.launcher.description, `seed ${o.seed}`, ...wrongTypes],
    );
  } finally {
    await dlq.close().catch(() => undefined);
    await dlqLoop.catch(() => undefined);
    await ledger.close().catch(() => undefined);
    await agent.close().catch(() => undefined);
    await worker.remove();
    await removeTopics(ctx.broker, [requestTopic, responseTopic, dlqTopic]);
  }
}
