import type { Logger } from 'pino';
import type { ManagedChild } from '../child-process.js';
import { ProbeSampler } from '../resource-sampler.js';
import { writeServiceConfig, type ServiceSpec, type WrittenConfig } from '../service-config.js';
import type { BrokerEndpoints } from '../transport-for.js';
import { startWorkerProcess, workerLauncher, type WorkerLauncher } from '../worker-process.js';

export interface DrillWorkerOptions {
  readonly broker: BrokerEndpoints;
  readonly transport: 'pulsar-ws' | 'pulsar';
  readonly services: readonly ServiceSpec[];
  /** Files written beside the descriptors (module tools, fake binaries). */
  readonly modules?: Readonly<Record<string, string>>;
  /** Worker environment beyond the defaults (limits, plugin settings); may name files in the config dir. */
  readonly env?: Readonly<Record<string, string>> | ((configDir: string) => Readonly<Record<string, string>>);
  readonly log: Logger;
}

/** The worker's own counters, from the line it logs when it has stopped. */
export interface WorkerStopStats {
  readonly received: number;
  readonly answered: number;
  readonly failed: number;
  readonly nacked: number;
  readonly deadLettered: number;
}

/**
 * A real worker process (`toolwire run` on the drill's transport) serving a drill's descriptors; it can be killed and started again on
 * the same descriptors, as a supervisor would.
 */
export class DrillWorker {
  private current: ManagedChild | undefined;
  private sampler: ProbeSampler | undefined;
  private starts = 0;

  private constructor(
    private readonly o: DrillWorkerOptions,
    private readonly config: WrittenConfig,
    readonly launcher: WorkerLauncher,
  ) {}

  static async create(o: DrillWorkerOptions): Promise<DrillWorker> {
    const config = await writeServiceConfig(o.services, o.modules);
    const launcher = workerLauncher(o.transport);
    return new DrillWorker(o, config, launcher);
  }

  get configDir(): string {
    return this.config.dir;
  }

  get process(): ManagedChild | undefined {
    return this.current;
  }

  /** Start a worker process; resolves once it is subscribed and serving. */
  async start(signal?: AbortSignal): Promise<ManagedChild> {
    if (this.current?.running) throw new Error('a drill worker is already running');
    this.starts++;
    this.current = await startWorkerProcess(
      {
        launcher: this.launcher,
        configDir: this.config.dir,
        broker: this.o.broker,
        transport: this.o.transport,
        logLevel: 'info',
        env: { TOOLWIRE_SHUTDOWN_GRACE_MS: '5000', ...(typeof this.o.env === 'function' ? this.o.env(this.config.dir) : this.o.env) },
        probe: true,
        label: `drill worker #${this.starts}`,
      },
      signal,
    );
    this.sampler = new ProbeSampler(this.current.process, 500);
    return this.current;
  }

  /** RSS samples of the current process so far (bytes). */
  rss(): number[] {
    return this.sampler?.series(0).map((s) => s.rssBytes) ?? [];
  }

  /** kill -9: no drain, no acks, sockets cut. */
  async kill(): Promise<void> {
    this.sampler?.stop();
    await this.current?.kill();
  }

  /** SIGTERM and drain; returns the counters it logged on stopping, when it did. */
  async stop(): Promise<WorkerStopStats | undefined> {
    const child = this.current;
    if (!child) return undefined;
    this.sampler?.stop();
    await child.stop(20_000);
    return parseStopStats(child.output());
  }

  async remove(): Promise<void> {
    if (this.current?.running) await this.current.kill();
    await this.config.remove();
  }
}

export function parseStopStats(output: string): WorkerStopStats | undefined {
  for (const line of output.split('\n').reverse()) {
    if (!line.includes('"msg":"stopped"')) continue;
    try {
      const o = JSON.parse(line) as Record<string, unknown>;
      const n = (k: string) => (typeof o[k] === 'number' ? o[k] : 0);
      return { received: n('received'), answered: n('answered'), failed: n('failed'), nacked: n('nacked'), deadLettered: n('deadLettered') };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
