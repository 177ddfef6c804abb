/**
 * Spawn the Python peers (test/interop/py/*) and TrustGraph's own console scripts from the
 * venv scripts/python-env.sh builds. Every process is tracked and stopped by its own pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PY_DIR = fileURLToPath(new URL('./py/', import.meta.url));

export interface ProcessResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A child's output and exit, killed past `limitMs`. */
export function collect(child: ChildProcess, limitMs: number, what: string): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-20_000)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not finish within ${limitMs} ms; stderr:\n${tail(stderr)}`));
    }, limitMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Each non-empty line a child prints on stdout, trimmed, as it completes. */
function onLines(child: ChildProcess, fn: (line: string) => void): void {
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    buffered += c;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (line !== '') fn(line);
    }
  });
}

function tail(text: string, lines = 20): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/**
 * The venv's python, built on first use (about a minute) and found in a fraction of a second
 * later: the interop venv, or the one of another requirements file.
 */
export async function interopPython(requirements?: string): Promise<string> {
  const child = spawn('bash', [join(REPO_ROOT, 'scripts/python-env.sh'), ...(requirements ? [requirements] : [])], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.on('data', (c: Buffer) => process.stderr.write(c));
  const r = await collect(child, 280_000, 'scripts/python-env.sh');
  const python = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !python.endsWith('/python')) {
    throw new Error(`scripts/python-env.sh failed (exit ${r.code}); the Python interop tests cannot run:\n${tail(r.stderr)}`);
  }
  return python;
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

function pythonEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' };
}

/** One JSON line that tg_call.py printed. */
export type CallLine = { n?: number; result: string } | { n?: number; chunk: string } | { n?: number; error: string } | { n?: number; timeout: number };

/** What every request-publishing script (tg_call.py, burst.py) takes: where, and what to send. */
interface RequestTarget {
  readonly python: string;
  readonly pulsarUrl: string;
  readonly requestQueue: string;
  readonly responseQueue: string;
  readonly config?: Record<string, unknown>;
  readonly arguments?: Record<string, unknown>;
}

export interface TgCallOptions extends RequestTarget {
  readonly streaming?: boolean;
  /** Seconds, as TrustGraph's client takes them. */
  readonly timeoutS?: number;
  readonly count?: number;
  readonly parallel?: boolean;
}

export interface TgCallResult extends ProcessResult {
  readonly lines: CallLine[];
}

/** Run test/interop/py/<script> with the target's flags and `extra`, within `limitMs`. */
function runRequestScript(script: string, o: RequestTarget, extra: readonly string[], limitMs: number): Promise<ProcessResult> {
  const args = [
    join(PY_DIR, script),
    '--pulsar-host',
    o.pulsarUrl,
    '--request-queue',
    o.requestQueue,
    '--response-queue',
    o.responseQueue,
    '--config',
    JSON.stringify(o.config ?? {}),
    '--arguments',
    JSON.stringify(o.arguments ?? {}),
    ...extra,
  ];
  return collect(spawn(o.python, args, { env: pythonEnv(), stdio: ['ignore', 'pipe', 'pipe'] }), limitMs, script);
}

/** Run tg_call.py: TrustGraph's ToolServiceClient.call / call_streaming against a service. */
export async function tgCall(o: TgCallOptions): Promise<TgCallResult> {
  const timeoutS = o.timeoutS ?? 20;
  const extra = ['--timeout', String(timeoutS), '--count', String(o.count ?? 1)];
  if (o.streaming) extra.push('--streaming');
  if (o.parallel) extra.push('--parallel');
  const r = await runRequestScript('tg_call.py', o, extra, (timeoutS * (o.parallel ? 1 : (o.count ?? 1)) + 30) * 1000);
  const lines: CallLine[] = [];
  for (const line of r.stdout.split('\n')) {
    if (line.trim() === '') continue;
    try {
      lines.push(JSON.parse(line) as CallLine);
    } catch {
      throw new Error(`tg_call.py printed a line that is not JSON: ${line}\nstderr:\n${tail(r.stderr)}`);
    }
  }
  return { ...r, lines };
}

export interface ServiceEvent {
  readonly event: 'ready' | 'request' | 'stopped' | 'failed';
  readonly tag: string;
  readonly request_id?: string;
  readonly inflight?: number;
  readonly config?: Record<string, unknown>;
  readonly arguments?: Record<string, unknown>;
  readonly error?: string;
}

export interface ServiceOptions {
  readonly python: string;
  readonly pulsarUrl: string;
  readonly id: string;
  /** Serves non-persistent://tg/request/<topic>, answers on non-persistent://tg/response/<topic>. */
  readonly topic: string;
  readonly tag?: string;
  readonly concurrency?: number;
  readonly tagInResponse?: boolean;
}

/** tg_service.py: a DynamicToolService subclass, running until stop(). */
export class PythonToolService {
  readonly events: ServiceEvent[] = [];
  #stderr = '';
  #exited: Promise<ProcessResult>;

  private constructor(
    private readonly child: ChildProcess,
    readonly tag: string,
  ) {
    onLines(child, (line) => this.events.push(JSON.parse(line) as ServiceEvent));
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (this.#stderr = (this.#stderr + c).slice(-20_000)));
    this.#exited = new Promise((resolve) => {
      child.once('close', (code, signal) => resolve({ code, signal, stdout: '', stderr: this.#stderr }));
    });
  }

  static async start(o: ServiceOptions): Promise<PythonToolService> {
    const tag = o.tag ?? uniqueName('svc');
    const args = [
      join(PY_DIR, 'tg_service.py'),
      '--id',
      o.id,
      '--topic',
      o.topic,
      '--pulsar-host',
      o.pulsarUrl,
      '--concurrency',
      String(o.concurrency ?? 1),
      '--tag',
      tag,
      '--log-level',
      'WARNING',
    ];
    if (o.tagInResponse) args.push('--tag-in-response');
    const child = spawn(o.python, args, { env: pythonEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const service = new PythonToolService(child, tag);
    await service.#waitFor((e) => e.event === 'ready', 60_000, 'to be ready');
    return service;
  }

  get stderr(): string {
    return this.#stderr;
  }

  requests(): ServiceEvent[] {
    return this.events.filter((e) => e.event === 'request');
  }

  async #waitFor(match: (e: ServiceEvent) => boolean, limitMs: number, what: string): Promise<void> {
    const deadline = Date.now() + limitMs;
    let exited: ProcessResult | undefined;
    void this.#exited.then((r) => (exited = r));
    while (!this.events.some(match)) {
      const failed = this.events.find((e) => e.event === 'failed');
      if (failed || exited) {
        throw new Error(`tg_service.py (${this.tag}) ${failed ? `failed: ${failed.error}` : `exited with ${exited?.code}`}:\n${tail(this.#stderr)}`);
      }
      if (Date.now() > deadline) {
        this.child.kill('SIGKILL');
        throw new Error(`tg_service.py (${this.tag}) did not come ${what} within ${limitMs} ms:\n${tail(this.#stderr)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGTERM, wait for a clean exit (the base class closes its consumer and producer). */
  async stop(): Promise<ProcessResult> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
      try {
        return await this.#exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return this.#exited;
  }
}

/** A console script of the venv (e.g. trustgraph-flow's `joke-service`). */
export function venvScript(python: string, name: string): string {
  return join(dirname(python), name);
}

export interface RawRequestEvent {
  readonly event: 'request';
  readonly data: string;
  readonly properties: Record<string, string>;
  readonly key: string;
  readonly batched: boolean;
}

export interface RawResponderOptions {
  readonly python: string;
  readonly pulsarUrl: string;
  readonly topic: string;
  /** Each sent as one unbatched message with the request's id. */
  readonly payloads: readonly string[];
  readonly requests?: number;
}

/**
 * raw_responder.py: answers requests on non-persistent://tg/request/<topic> with exact bytes
 * (plain Pulsar client, no TrustGraph code) and reports each request exactly as received.
 * Resolves once it is subscribed; `finished` settles when it has answered.
 */
export async function startRawResponder(o: RawResponderOptions): Promise<{ finished: Promise<RawRequestEvent[]> }> {
  const args = [
    join(PY_DIR, 'raw_responder.py'),
    '--pulsar-host',
    o.pulsarUrl,
    '--topic',
    o.topic,
    '--payloads',
    JSON.stringify(o.payloads),
    '--requests',
    String(o.requests ?? 1),
  ];
  const child = spawn(o.python, args, { env: pythonEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const events: Array<{ event: string; error?: string }> = [];
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-10_000)));
  let onReady: (() => void) | undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  onLines(child, (line) => {
    const e = JSON.parse(line) as { event: string };
    events.push(e);
    if (e.event === 'ready') onReady?.();
  });
  const finished = new Promise<RawRequestEvent[]>((resolve, reject) => {
    child.once('close', (code) => {
      const failed = events.find((e) => e.event === 'failed');
      if (code !== 0 || failed) reject(new Error(`raw_responder.py exited ${code}${failed ? `: ${failed.error}` : ''}\n${tail(stderr)}`));
      else resolve(events.filter((e) => e.event === 'request') as unknown as RawRequestEvent[]);
    });
  });
  await Promise.race([ready, finished.then(() => Promise.reject(new Error('raw_responder.py exited before it was ready')))]);
  return { finished };
}

export interface BurstOptions extends RequestTarget {
  readonly count: number;
  /** Let the producer batch, as TrustGraph's Python producers do. */
  readonly batched: boolean;
  /** Seconds to wait for the last answer. */
  readonly waitS?: number;
}

export interface BurstResult {
  readonly sent: number;
  readonly answered: number;
  readonly errors: Record<string, number>;
  readonly duplicates: number;
  readonly missing: number;
}

/** burst.py: publish `count` requests at once with the Python pulsar-client and count the answers. */
export async function burst(o: BurstOptions): Promise<BurstResult> {
  const waitS = o.waitS ?? 30;
  const extra = ['--count', String(o.count), '--wait', String(waitS)];
  if (o.batched) extra.push('--batched');
  const r = await runRequestScript('burst.py', o, extra, (waitS + 60) * 1000);
  if (r.code !== 0) throw new Error(`burst.py exited ${r.code}:\n${tail(r.stderr)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as BurstResult;
}

/** The ready line of config_service.py. */
export interface ConfigServiceReady {
  readonly ready: true;
  /** Base URL of the gateway stand-in (give it to the TG CLI as `-u`), or null without one. */
  readonly gateway: string | null;
  readonly pid: number;
  readonly id: string;
  readonly workspaces: string[];
  /** Full Pulsar topic names of the system queues, e.g. non-persistent://tg/request/config. */
  readonly request: string;
  readonly response: string;
  readonly notify: string;
  /** From process start (after imports) to ready. */
  readonly seconds: number;
}

export interface ConfigServiceOptions {
  readonly python: string;
  readonly pulsarUrl: string;
  /** Serve POST <gatewayUrl>api/v1/config (implied by gatewayToken). */
  readonly gateway?: boolean;
  /** Require `Authorization: Bearer <token>` at the gateway (else 401 {"error":"auth failure"}). */
  readonly gatewayToken?: string;
  /**
   * Queue name: request:tg:<topic>, response:tg:<topic>, notify:tg:<topic>
   * (default "config", TrustGraph's own). Give fixtures that run at once their own topic:
   * with the same one they share the request subscription and clash on the notify one.
   */
  readonly topic?: string;
  /** Service id = subscription name (default "config-svc"). */
  readonly id?: string;
  /** Workspaces registered in __workspaces__ before start (default ["default"]). */
  readonly workspaces?: readonly string[];
  /** The broker token TrustGraph's own client sends (its --pulsar-api-key), for a secured broker. */
  readonly pulsarApiKey?: string;
  readonly readyTimeoutMs?: number;
}

export interface ConfigServiceFixture {
  readonly info: ConfigServiceReady;
  readonly gatewayUrl?: string;
  /** SIGTERM, wait for the exit (SIGKILL after 15 s). */
  stop(): Promise<ProcessResult>;
  stderr(): string;
}

/**
 * config_service.py: TrustGraph's real config service (trustgraph-flow) over an in-memory
 * table, optionally with a gateway stand-in built from TrustGraph's gateway code, so that
 * tg-put-config-item and friends (tgConfigCli) can talk to it. About 3-4 s to ready.
 */
export async function startConfigService(o: ConfigServiceOptions): Promise<ConfigServiceFixture> {
  const args = [join(PY_DIR, 'config_service.py'), '--pulsar-host', o.pulsarUrl];
  if (o.gateway || o.gatewayToken !== undefined) args.push('--gateway');
  if (o.gatewayToken !== undefined) args.push('--gateway-token', o.gatewayToken);
  if (o.topic !== undefined) args.push('--config-topic', o.topic);
  if (o.id !== undefined) args.push('--id', o.id);
  if (o.workspaces !== undefined) args.push('--workspaces', o.workspaces.join(','));
  if (o.pulsarApiKey !== undefined) args.push('--pulsar-api-key', o.pulsarApiKey);
  const child = spawn(o.python, args, { env: pythonEnv(), stdio: ['ignore', 'pipe', 'pipe'] });

  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-20_000)));
  const exited = new Promise<ProcessResult>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, stdout: '', stderr }));
  });

  const limitMs = o.readyTimeoutMs ?? 60_000;
  const info = await new Promise<ConfigServiceReady>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`config_service.py did not become ready within ${limitMs} ms:\n${tail(stderr)}`));
    }, limitMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    onLines(child, (line) => {
      let event: { ready?: boolean; failed?: string };
      try {
        event = JSON.parse(line) as { ready?: boolean; failed?: string };
      } catch {
        return;
      }
      if (event.ready === true) {
        clearTimeout(timer);
        resolve(event as ConfigServiceReady);
      } else if (event.failed !== undefined) {
        clearTimeout(timer);
        reject(new Error(`config_service.py failed: ${event.failed}\n${tail(stderr)}`));
      }
    });
    void exited.then((r) => {
      clearTimeout(timer);
      reject(new Error(`config_service.py exited (${r.code ?? r.signal}) before it was ready:\n${tail(stderr)}`));
    });
  });

  return {
    info,
    ...(info.gateway ? { gatewayUrl: info.gateway } : {}),
    stderr: () => stderr,
    async stop(): Promise<ProcessResult> {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      }
      return exited;
    },
  };
}

/** TrustGraph's config console scripts (trustgraph-cli). */
export type TgConfigScript = 'tg-put-config-item' | 'tg-get-config-item' | 'tg-delete-config-item' | 'tg-list-config-items' | 'tg-show-config';

/**
 * Run one of TrustGraph's config CLIs from the venv, e.g.
 * `tgConfigCli(python, 'tg-put-config-item', ['-u', gatewayUrl, '--type', 'tool', '--key', 'x', '--value', '{}'])`.
 * `env` is laid over the environment (TRUSTGRAPH_URL, TRUSTGRAPH_TOKEN, TRUSTGRAPH_WORKSPACE
 * are the scripts' defaults for -u, -t, -w). Mind that these scripts catch their own errors:
 * a failure prints "Exception: ..." on stdout and still exits 0.
 */
export function tgConfigCli(
  python: string,
  name: TgConfigScript,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  limitMs = 30_000,
): Promise<ProcessResult> {
  const child = spawn(venvScript(python, name), [...args], { env: { ...pythonEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, limitMs, name);
}

export interface TextCompletionOptions {
  readonly python: string;
  readonly pulsarUrl: string;
  /** The config service's topic (startConfigService's `topic`): where the processor reads its flows. */
  readonly configTopic: string;
  /** The OpenAI-compatible base URL (…/v1) the processor calls. */
  readonly openaiUrl: string;
  /** The model it asks for (a flow's `model` parameter overrides it). */
  readonly model: string;
  /** Resolve once this flow runs (workspace/flow), as the processor logs it. */
  readonly flow: string;
  readonly readyTimeoutMs?: number;
}

export interface TextCompletionFixture {
  /** SIGTERM, wait for the exit (SIGKILL after 15 s). */
  stop(): Promise<ProcessResult>;
  stderr(): string;
}

/**
 * text_completion.py: TrustGraph's own OpenAI text-completion processor (trustgraph-flow),
 * reading its flows from the test's config service, serving text-completion on the broker.
 * Ready once it logs that `flow` started (its consumer on the flow's request queue is open).
 */
export async function startTextCompletion(o: TextCompletionOptions): Promise<TextCompletionFixture> {
  const args = [
    join(PY_DIR, 'text_completion.py'),
    '--config-topic',
    o.configTopic,
    '-p',
    o.pulsarUrl,
    '-u',
    o.openaiUrl,
    '-k',
    'scripted-model-key',
    '-m',
    o.model,
    '--no-metrics',
    '--no-loki-enabled',
    '-l',
    'INFO',
  ];
  const child = spawn(o.python, args, { env: pythonEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const exited = new Promise<ProcessResult>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, stdout: '', stderr }));
  });
  const started = `Started flow: ${o.flow}`;
  const limitMs = o.readyTimeoutMs ?? 60_000;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`text_completion.py did not start flow ${o.flow} within ${limitMs} ms:\n${tail(stderr)}`));
    }, limitMs);
    child.stderr?.setEncoding('utf8').on('data', (c: string) => {
      stderr = (stderr + c).slice(-40_000);
      if (stderr.includes(started)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    void exited.then((r) => {
      clearTimeout(timer);
      reject(new Error(`text_completion.py exited (${r.code ?? r.signal}) before flow ${o.flow} started:\n${tail(stderr)}`));
    });
  });
  return {
    stderr: () => stderr,
    async stop(): Promise<ProcessResult> {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        try {
          return await exited;
        } finally {
          clearTimeout(timer);
        }
      }
      return exited;
    },
  };
}
