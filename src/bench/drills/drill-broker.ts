import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapTrustGraph } from '../../pulsar/admin.js';
import { runScript } from '../environment-setup.js';
import type { BrokerEndpoints } from '../transport-for.js';

/**
 * A broker of the drill's own, so stopping it disturbs nobody: scripts/pulsar-broker.sh with
 * its own run dir (config, RocksDB metadata, bookie data, pid) and free ports; the
 * distribution itself is shared and read-only. Restarted with --keep-data so persistent
 * topics keep their messages and subscriptions, as a real broker restart does.
 */
export class DrillBroker {
  private constructor(
    private readonly runDir: string,
    private readonly env: NodeJS.ProcessEnv,
    readonly endpoints: BrokerEndpoints,
    private readonly onStderr: (s: string) => void,
  ) {}

  static async start(signal: AbortSignal, onStderr: (s: string) => void): Promise<DrillBroker> {
    const runDir = await mkdtemp(join(tmpdir(), 'toolwire-drill-broker-'));
    const [port, webPort] = [await freePort(), await freePort()];
    const env = { ...process.env, TOOLWIRE_PULSAR_RUN: runDir, TOOLWIRE_PULSAR_PORT: String(port), TOOLWIRE_PULSAR_WEB_PORT: String(webPort) };
    const b = new DrillBroker(runDir, env, { pulsarUrl: `pulsar://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${webPort}` }, onStderr);
    try {
      const line = await runScript('pulsar-broker.sh', ['start'], env, signal, onStderr);
      // "reused" would mean something else answers on a port we just found free: not ours to stop.
      if (!line.startsWith('started ')) throw new Error(`expected a broker of our own, got: ${line}`);
      await bootstrapTrustGraph(b.endpoints.adminUrl, { signal });
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
    await runScript('pulsar-broker.sh', ['start', '--keep-data'], this.env, signal, this.onStderr);
  }

  /** Stop it and delete its run dir. */
  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.runDir, { recursive: true, force: true });
  }
}
