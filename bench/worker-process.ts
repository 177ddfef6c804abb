import { ManagedChild, PROBE_MODULE_URL, TOOLWIRE_BIN } from './child-process.js';
import { brokerEnv, type BrokerEndpoints } from './transport-for.js';

/** How a worker process is started, and how reports name it. */
export interface WorkerLauncher {
  /** The CLI script and its arguments. */
  readonly argv: readonly string[];
  /** Printed in reports: which command served. */
  readonly description: string;
}

/** The worker the bench and the drills measure is `toolwire run` itself, as operators start it. */
export function workerLauncher(kind: 'pulsar-ws' | 'pulsar', bin = TOOLWIRE_BIN): WorkerLauncher {
  return { argv: [bin, 'run'], description: `toolwire run (child process, ${kind}${bin === TOOLWIRE_BIN ? '' : `, ${bin}`})` };
}

export interface WorkerProcessOptions {
  readonly launcher: WorkerLauncher;
  readonly configDir: string;
  readonly broker: BrokerEndpoints;
  readonly transport: 'pulsar-ws' | 'pulsar';
  readonly logLevel: string;
  /** Extra environment: limits (TOOLWIRE_TIMEOUT_MS...) for drills. */
  readonly env?: Readonly<Record<string, string>>;
  /** Preload the resource probe and open an IPC channel for it. */
  readonly probe: boolean;
  /** Write a V8 CPU profile here when the process exits. */
  readonly cpuProfDir?: string;
  /** Write `/tmp/perf-PID.map` for perf (--perf-basic-prof). */
  readonly perfMap?: boolean;
  readonly label: string;
}

/**
 * Start a worker process. At log level info or finer, resolve once it logs that it is
 * serving; at quieter levels there is no such line, and the caller's first answered
 * request is the sign (the load generator and the drills probe until one is answered).
 */
export async function startWorkerProcess(o: WorkerProcessOptions, signal?: AbortSignal): Promise<ManagedChild> {
  // The caller's NODE_OPTIONS (a V8 flag measured side by side) adds to the run's, not replaces the probe.
  const nodeOptions = [process.env['NODE_OPTIONS'] ?? '', o.env?.['NODE_OPTIONS'] ?? ''];
  if (o.probe) nodeOptions.push(`--import=${PROBE_MODULE_URL}`);
  const execArgs = [...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []), ...(o.perfMap ? ['--perf-basic-prof'] : [])];
  const child = new ManagedChild({
    command: process.execPath,
    args: [...execArgs, ...o.launcher.argv],
    ipc: o.probe,
    label: o.label,
    env: {
      ...process.env,
      TOOLWIRE_CONFIG_DIR: o.configDir,
      TOOLWIRE_TRANSPORT: o.transport,
      ...brokerEnv(o.broker),
      TOOLWIRE_HTTP_PORT: 'off',
      LOG_FORMAT: 'json',
      LOG_LEVEL: o.logLevel,
      ...o.env,
      NODE_OPTIONS: nodeOptions.join(' ').trim(),
    },
  });
  if (!['info', 'debug', 'trace'].includes(o.logLevel)) return child;
  try {
    await child.waitForLine(/toolwire is serving/, 60_000, signal);
  } catch (err) {
    await child.kill();
    throw err;
  }
  return child;
}
