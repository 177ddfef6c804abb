import { randomUUID } from 'node:crypto';
import type { Catalog } from '../../src/catalog/catalog.js';
import { encodeRequest } from '../../src/envelope/request.js';
import { decodeResponse, type ToolResponse } from '../../src/envelope/response.js';
import { MemoryTransport } from '../../src/transport/memory-transport.js';
import type { Subscription, Transport } from '../../src/transport/transport.js';
import type { WorkerLimits } from '../../src/worker/limits.js';
import { Worker, type WorkerOptions } from '../../src/worker/worker.js';
import type { ToolService } from '../../src/catalog/descriptors.js';
import type { Plugin } from '../../src/plugins/plugin.js';
import { captureLogger, pluginMaker, type Behaviour, testRegistry } from './harness.js';

/** Collects every response on a topic, grouped by request id. */
export class ResponseCollector {
  readonly byId = new Map<string, ToolResponse[]>();
  private waiters: (() => void)[] = [];
  private constructor(private readonly sub: Subscription) {}

  static async on(transport: Transport, topic: string): Promise<ResponseCollector> {
    const c = new ResponseCollector(await transport.subscribe({ topic, subscription: `collector-${randomUUID()}` }));
    void c.loop();
    return c;
  }

  private async loop(): Promise<void> {
    for await (const m of this.sub) {
      await m.ack();
      const id = m.properties['id'] ?? '(none)';
      const list = this.byId.get(id) ?? [];
      list.push(decodeResponse(m.data));
      this.byId.set(id, list);
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** Ids with a final message. */
  finished(): string[] {
    return [...this.byId].filter(([, rs]) => rs.some((r) => r.endOfStream)).map(([id]) => id);
  }

  async waitFor(pred: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error('condition not met in time');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  async final(id: string, timeoutMs = 5000): Promise<ToolResponse[]> {
    await this.waitFor(() => this.byId.get(id)?.some((r) => r.endOfStream) ?? false, timeoutMs);
    return this.byId.get(id)!;
  }

  close(): Promise<void> {
    return this.sub.close();
  }
}

export interface Fixture {
  transport: MemoryTransport;
  worker: Worker;
  responses: ResponseCollector;
  lines: () => string[];
  send(topic: string, body: Buffer | string, properties?: Record<string, string>): Promise<void>;
  request(topic: string, args: Record<string, unknown>, config?: Record<string, unknown>, properties?: Record<string, string>): Promise<string>;
  startAnotherWorker(): Promise<Worker>;
  close(): Promise<void>;
}

export interface FixtureOptions {
  readonly transport?: MemoryTransport;
  /** The workers' plugin factory; default: the behaviours' test kind and the shipped kinds. */
  readonly createPlugin?: (service: ToolService) => Promise<Plugin | undefined>;
  readonly interceptors?: WorkerOptions['interceptors'];
}

export async function startFixture(
  catalog: Catalog,
  behaviours: Record<string, Behaviour>,
  responseTopic: string,
  limits: Partial<WorkerLimits> = {},
  options: FixtureOptions = {},
): Promise<Fixture> {
  const { transport = new MemoryTransport(), createPlugin, interceptors } = options;
  const { log, lines } = captureLogger();
  const make = createPlugin ?? pluginMaker(testRegistry(behaviours), log);
  const responses = await ResponseCollector.on(transport, responseTopic);
  const workers: Worker[] = [];
  const startWorker = async () => {
    const w = await Worker.create({
      transport,
      catalog,
      createPlugin: make,
      log,
      limits: { nackDelayMs: 20, shutdownGraceMs: 2000, ...limits },
      ...(interceptors ? { interceptors } : {}),
    });
    await w.start();
    workers.push(w);
    return w;
  };
  const worker = await startWorker();
  const send = async (topic: string, body: Buffer | string, properties: Record<string, string> = {}) => {
    await (await transport.producer(topic)).send({ data: body, properties });
  };
  return {
    transport,
    worker,
    responses,
    lines,
    send,
    async request(topic, args, config = {}, properties = {}) {
      const id = randomUUID();
      await send(topic, encodeRequest({ config, arguments: args }), { id, ...properties });
      return id;
    },
    startAnotherWorker: startWorker,
    async close() {
      for (const w of workers) await w.stop(100);
      await responses.close();
      await transport.close();
    },
  };
}
