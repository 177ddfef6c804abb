import type { Logger } from 'pino';
import { ManagedChild, TOOLWIRE_BIN } from '../child-process.js';
import { freePort } from '../free-port.js';
import { brokerEnv, type BrokerEndpoints } from '../transport-for.js';
import { DrillWorker } from './drill-worker.js';
import { trustGraphSourceEnv, type ConfigQueueNames } from './trustgraph-config-service.js';

/** Every line a process printed that the drill counts, by message. */
export class LogCounter {
  readonly counts = new Map<string, number>();
  /** Lines at warn or above, by message. */
  readonly loud = new Map<string, number>();

  watch(child: ManagedChild): void {
    child.onLine((line) => {
      if (!line.startsWith('{')) return;
      try {
        const o = JSON.parse(line) as { msg?: string; level?: number };
        const msg = o.msg ?? '';
        this.counts.set(msg, (this.counts.get(msg) ?? 0) + 1);
        if ((o.level ?? 0) >= 40) this.loud.set(msg, (this.loud.get(msg) ?? 0) + 1);
      } catch {
        // not a log line of ours
      }
    });
  }

  count(msg: string): number {
    return this.counts.get(msg) ?? 0;
  }
}

/** A toolwire process of the fleet: how it is reached and what it logged. */
export interface FleetMember {
  readonly name: string;
  readonly child: ManagedChild;
  readonly logs: LogCounter;
  /** http://127.0.0.1:port of its HTTP server (the worker's /readyz and gateway, or `mcp serve`'s /mcp). */
  readonly baseUrl: string;
}

/** A worker (`toolwire run`) on the TrustGraph config source, its HTTP server (probes, gateway) on a port of its own. */
export async function startFleetWorker(
  name: string,
  o: { broker: BrokerEndpoints; transport: 'pulsar-ws' | 'pulsar'; queues: ConfigQueueNames; log: Logger; signal: AbortSignal },
): Promise<{ member: FleetMember; worker: DrillWorker }> {
  const port = await freePort();
  const worker = await DrillWorker.create({
    transport: o.transport,
    broker: o.broker,
    log: o.log,
    services: [],
    env: { ...trustGraphSourceEnv(o.queues), TOOLWIRE_HTTP_PORT: String(port), TOOLWIRE_NACK_DELAY_MS: '1000' },
  });
  const logs = new LogCounter();
  const child = await worker.start(o.signal);
  logs.watch(child);
  return { member: { name, child, logs, baseUrl: `http://127.0.0.1:${port}` }, worker };
}

/** `toolwire mcp serve --http` on the TrustGraph config source. */
export async function startMcpServe(o: {
  broker: BrokerEndpoints;
  transport: 'pulsar-ws' | 'pulsar';
  queues: ConfigQueueNames;
  signal: AbortSignal;
}): Promise<FleetMember> {
  const port = await freePort();
  const child = new ManagedChild({
    command: process.execPath,
    args: [TOOLWIRE_BIN, 'mcp', 'serve', '--http', String(port)],
    env: {
      ...process.env,
      TOOLWIRE_TRANSPORT: o.transport,
      ...brokerEnv(o.broker),
      ...trustGraphSourceEnv(o.queues),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
    },
    ipc: false,
    label: 'toolwire mcp serve',
  });
  const logs = new LogCounter();
  logs.watch(child);
  try {
    await child.waitForLine(/serving MCP on streamable HTTP/, 60_000, o.signal);
  } catch (err) {
    await child.kill();
    throw err;
  }
  return { name: 'mcp-serve', child, logs, baseUrl: `http://127.0.0.1:${port}` };
}

/** The worker's /readyz, polled: when it was last seen ready and not. */
export class ReadinessWatch {
  private readonly changes: { at: number; ready: boolean }[] = [];
  private last: boolean | undefined;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly everyMs = 200,
  ) {
    this.loop = this.poll();
  }

  private async poll(): Promise<void> {
    while (this.running) {
      const ready = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(2_000) }).then(
        async (r) => (await r.arrayBuffer(), r.status === 200),
        () => false,
      );
      if (ready !== this.last) this.changes.push({ at: Date.now(), ready });
      this.last = ready;
      await new Promise((r) => setTimeout(r, this.everyMs));
    }
  }

  get ready(): boolean {
    return this.last === true;
  }

  /** When it was first seen ready at or after `since` (`since` itself if it already was); undefined while it is not. */
  readyAgainAfter(since: number): number | undefined {
    return this.changes.find((c) => c.ready && c.at >= since)?.at ?? (this.last === true ? since : undefined);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}
