import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapTrustGraph } from '../src/pulsar/trustgraph-bootstrap.js';
import { runScript } from './environment-setup.js';
import { freePort } from './free-port.js';
import type { BrokerEndpoints } from './transport-for.js';

/**
 * A broker of a drill's or a test's own, so stopping it disturbs nobody: scripts/pulsar-broker.sh
 * with its own run dir (config, RocksDB metadata, bookie data, pid) and free ports; the
 * distribution itself is shared and read-only. Started again with --keep-data, persistent
 * topics keep their messages and subscriptions, as on a real broker restart.
 */
export class OwnBroker {
  private constructor(
    private readonly runDir: string,
    private readonly env: NodeJS.ProcessEnv,
    readonly endpoints: BrokerEndpoints,
    private readonly onStderr: (s: string) => void,
  ) {}

  /**
   * A fresh broker with TrustGraph's tenant and namespaces; resolves once it answers.
   * `confExtra`: standalone.conf lines of its own; `adminToken`: a superuser's token, for a
   * broker with authentication on (its readiness check and the bootstrap send it).
   */
  static async start(signal: AbortSignal, onStderr: (s: string) => void = () => undefined, confExtra?: string, adminToken?: string): Promise<OwnBroker> {
    const runDir = await mkdtemp(join(tmpdir(), 'toolwire-own-broker-'));
    const port = await freePort();
    let webPort = await freePort();
    while (webPort === port) webPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TOOLWIRE_PULSAR_RUN: runDir,
      TOOLWIRE_PULSAR_PORT: String(port),
      TOOLWIRE_PULSAR_WEB_PORT: String(webPort),
    };
    delete env['TOOLWIRE_PULSAR_KEEP_DATA'];
    if (adminToken === undefined) delete env['PULSAR_ADMIN_TOKEN'];
    else env['PULSAR_ADMIN_TOKEN'] = adminToken;
    // standalone.conf lines of this broker's own (a limit a test needs), or none.
    if (confExtra === undefined) delete env['TOOLWIRE_PULSAR_CONF_EXTRA'];
    else env['TOOLWIRE_PULSAR_CONF_EXTRA'] = confExtra;
    const b = new OwnBroker(runDir, env, { pulsarUrl: `pulsar://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${webPort}` }, onStderr);
    try {
      await b.run(['start'], signal);
      await bootstrapTrustGraph(b.endpoints.adminUrl, { signal, token: adminToken });
    } catch (err) {
      await b.destroy();
      throw err;
    }
    return b;
  }

  /** Stop it (SIGTERM, the broker shuts down cleanly; SIGKILL after 30 s). */
  async stop(): Promise<void> {
    await runScript('pulsar-broker.sh', ['stop'], this.env, AbortSignal.timeout(90_000), this.onStderr);
  }

  /** Start it again on the data it left. */
  async startAgain(signal: AbortSignal): Promise<void> {
    await this.run(['start', '--keep-data'], signal);
  }

  /** True when the script finds it answering. */
  async up(): Promise<boolean> {
    return runScript('pulsar-broker.sh', ['status'], this.env, AbortSignal.timeout(30_000), this.onStderr).then(
      () => true,
      () => false,
    );
  }

  /** Stop it and delete its run dir. */
  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.runDir, { recursive: true, force: true });
  }

  private async run(args: string[], signal: AbortSignal): Promise<void> {
    const line = (await runScript('pulsar-broker.sh', args, this.env, signal, this.onStderr)).split('\n').pop();
    // "reused" would mean something else answers on a port we just found free: not ours to stop.
    const expected = `started ${this.endpoints.pulsarUrl} ${this.endpoints.adminUrl}`;
    if (line !== expected) throw new Error(`scripts/pulsar-broker.sh ${args.join(' ')}: expected "${expected}", got "${line ?? ''}"`);
  }
}
