/**
 * A broker of a test's own, started with scripts/pulsar-broker.sh on free ports and a run dir
 * of its own, so that it can be stopped and started again without touching the broker the
 * other tests (and other people) share.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../../src/bench/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/pulsar-broker.sh', import.meta.url));

export interface ScriptResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export class SecondBroker {
  private constructor(
    readonly runDir: string,
    readonly brokerPort: number,
    readonly webPort: number,
  ) {}

  static async create(): Promise<SecondBroker> {
    const runDir = await mkdtemp(join(tmpdir(), 'toolwire-broker-'));
    const brokerPort = await freePort();
    let webPort = await freePort();
    while (webPort === brokerPort) webPort = await freePort();
    return new SecondBroker(runDir, brokerPort, webPort);
  }

  get pulsarUrl(): string {
    return `pulsar://127.0.0.1:${this.brokerPort}`;
  }

  get adminUrl(): string {
    return `http://127.0.0.1:${this.webPort}`;
  }

  /** Run scripts/pulsar-broker.sh with this broker's run dir and ports. */
  script(args: readonly string[], limitMs = 240_000): Promise<ScriptResult> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TOOLWIRE_PULSAR_RUN: this.runDir,
      TOOLWIRE_PULSAR_PORT: String(this.brokerPort),
      TOOLWIRE_PULSAR_WEB_PORT: String(this.webPort),
    };
    delete env['TOOLWIRE_PULSAR_KEEP_DATA'];
    return new Promise((resolve, reject) => {
      const child = spawn('bash', [SCRIPT, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], signal: AbortSignal.timeout(limitMs) });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-8000)));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() }));
    });
  }

  /** `start` (fresh data) or `start --keep-data`; throws unless this call started it. */
  async start(keepData: boolean): Promise<void> {
    const r = await this.script(keepData ? ['start', '--keep-data'] : ['start']);
    const expected = `started ${this.pulsarUrl} ${this.adminUrl}`;
    if (r.code !== 0 || r.stdout.split('\n').pop() !== expected) {
      throw new Error(`scripts/pulsar-broker.sh start${keepData ? ' --keep-data' : ''} did not start the second broker (exit ${r.code}, stdout "${r.stdout}"):\n${r.stderr}`);
    }
  }

  async stop(): Promise<void> {
    const r = await this.script(['stop'], 90_000);
    if (r.code !== 0) throw new Error(`scripts/pulsar-broker.sh stop exited with ${r.code}:\n${r.stderr}`);
  }

  /** True when the script finds it answering. */
  async up(): Promise<boolean> {
    return (await this.script(['status'], 30_000)).code === 0;
  }

  /** Stop it (only if this script started it: the pid file says so) and remove its run dir. */
  async destroy(): Promise<void> {
    try {
      await this.stop();
    } finally {
      await rm(this.runDir, { recursive: true, force: true });
    }
  }
}
