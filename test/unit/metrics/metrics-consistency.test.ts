/**
 * What a scrape shows beside what agents have read: never fewer outcomes than the answers
 * already handed to the broker, never one that did not happen (a publish that failed), and
 * no series of a service or tool the catalog no longer has.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_PROPERTY } from '../../../src/envelope/properties.js';
import { TransportError } from '../../../src/errors.js';
import { metricsInterceptor, WorkerMetrics } from '../../../src/metrics/worker-metrics.js';
import type { ToolCall } from '../../../src/plugins/plugin.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { IncomingMessage, Producer, SubscribeOptions, Subscription, Transport } from '../../../src/transport/transport.js';
import { Worker } from '../../../src/worker/worker.js';
import { captureLogger, catalogOf, entry, pluginMaker, testRegistry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';
import { ResponseCollector } from '../../support/worker-fixture.js';

const RES = 'non-persistent://tg/response/consistency';

/** The memory broker, with a hold on the acks of request messages and a fault on answer publishes. */
class HeldTransport implements Transport {
  readonly kind = 'memory';
  readonly inner = new MemoryTransport();
  /** While set, a request's ack waits for it. */
  ackGate: Promise<void> | undefined;
  /** Sends to the response topic that fail before reaching the broker. */
  failAnswers = 0;

  get connected(): boolean {
    return true;
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    const sub = await this.inner.subscribe(options);
    const held = (m: IncomingMessage): IncomingMessage => ({
      data: m.data,
      properties: m.properties,
      redeliveryCount: m.redeliveryCount,
      messageId: m.messageId,
      deliveryKey: m.deliveryKey,
      topic: m.topic,
      ack: async () => {
        await this.ackGate;
        await m.ack();
      },
      nack: () => m.nack(),
    });
    return {
      topic: sub.topic,
      subscription: sub.subscription,
      redeliverable: sub.redeliverable,
      stop: () => sub.stop(),
      close: () => sub.close(),
      removeOnClose: () => sub.removeOnClose(),
      async *[Symbol.asyncIterator]() {
        for await (const m of sub) yield held(m);
      },
    };
  }

  async producer(topic: string): Promise<Producer> {
    const p = await this.inner.producer(topic);
    if (topic !== RES) return p;
    return {
      topic,
      send: (message, s) => {
        if (this.failAnswers > 0) {
          this.failAnswers--;
          return Promise.reject(new TransportError('the broker refused the answer'));
        }
        return p.send(message, s);
      },
    };
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Every sample line of the exposition text, by its series. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

const ok = (call: ToolCall) =>
  (async function* () {
    yield `ok ${call.tool?.name ?? ''}`;
  })();
const registry = testRegistry({ ok });
const REQ = (id: string) => `persistent://tg/flow/${id}-request`;
const svc = (id: string) =>
  entry('tool-service', id, service(id, { 'response-queue': RES, 'config-params': ['op'], plugin: { kind: 'test', behaviour: 'ok' } }));
const tool = (name: string, of: string) => entry('tool', name, { name, service: of, op: name });

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function start(entries: Parameters<typeof catalogOf>[0]) {
  const log = captureLogger('warn').log;
  const transport = new HeldTransport();
  const metrics = new WorkerMetrics({ processMetrics: false });
  const catalog = await catalogOf(entries, registry);
  // Wired as the app wires them (assembly/app.ts).
  const worker = await Worker.create({
    transport,
    catalog,
    createPlugin: pluginMaker(registry),
    log,
    interceptors: (s) => [metricsInterceptor(metrics.forService(s.id))],
    events: metrics.workerEvents(),
    limits: { nackDelayMs: 10 },
  });
  await worker.start();
  const answers = await ResponseCollector.on(transport.inner, RES);
  close = async () => {
    await worker.stop(100);
    await answers.close();
    await transport.close();
  };
  let n = 0;
  const request = async (serviceId: string, toolName: string) => {
    const id = `r${n++}`;
    await (
      await transport.inner.producer(REQ(serviceId))
    ).send({ data: JSON.stringify({ config: {}, arguments: {} }), properties: { id, [TOOL_PROPERTY]: toolName } });
    return id;
  };
  return { transport, metrics, worker, answers, request, log };
}

describe('a scrape', () => {
  it('counts an answer the agent has read, even before the worker has acked its request', async () => {
    const { transport, metrics, answers, request } = await start([svc('held'), tool('held-tool', 'held')]);
    let release!: () => void;
    transport.ackGate = new Promise<void>((r) => (release = r));
    const id = await request('held', 'held-tool');
    await answers.final(id);
    // The agent has its answer; the worker still waits for the ack. A scrape now must count it.
    const scrape = metrics.text();
    release();
    const s = samples(await scrape);
    expect(s.get('toolwire_requests_total{service="held",tool="held-tool",outcome="answered"}')).toBe(1);
    expect(s.get('toolwire_request_duration_seconds_count{service="held",tool="held-tool"}')).toBe(1);
  });

  it('counts a delivery whose answer could not be published as nacked, not answered, and its redelivery as answered', async () => {
    const { transport, metrics, answers, request } = await start([svc('flaky'), tool('flaky-tool', 'flaky')]);
    transport.failAnswers = 1;
    const id = await request('flaky', 'flaky-tool');
    await answers.final(id);
    const s = samples(await metrics.text());
    expect(s.get('toolwire_requests_total{service="flaky",tool="flaky-tool",outcome="nacked"}')).toBe(1);
    expect(s.get('toolwire_requests_total{service="flaky",tool="flaky-tool",outcome="answered"}')).toBe(1);
    expect(s.get('toolwire_redeliveries_total{service="flaky"}')).toBe(1);
  });

  it('shows no series of a service or tool gone from the catalog, nor of its plugin', async () => {
    const { metrics, worker, answers, request } = await start([
      svc('stays'),
      svc('goes'),
      tool('kept', 'stays'),
      tool('dropped', 'stays'),
      tool('gone-tool', 'goes'),
    ]);
    metrics.pluginEvents('goes', 'test').count('retry');
    metrics.pluginEvents('stays', 'test').count('retry');
    for (const [s, t] of [
      ['stays', 'kept'],
      ['stays', 'dropped'],
      ['goes', 'gone-tool'],
    ] as const)
      await answers.final(await request(s, t));
    const before = await metrics.text();
    expect(before).toMatch(/tool="dropped"/);
    expect(before).toMatch(/service="goes"/);
    await worker.apply(await catalogOf([svc('stays'), tool('kept', 'stays')], registry));
    const after = await metrics.text();
    expect(after).not.toMatch(/tool="dropped"/);
    expect(after).not.toMatch(/service="goes"/);
    expect(samples(after).get('toolwire_requests_total{service="stays",tool="kept",outcome="answered"}')).toBe(1);
    expect(samples(after).get('toolwire_plugin_events_total{service="stays",plugin="test",event="retry"}')).toBe(1);
  });
});
