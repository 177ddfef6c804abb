/**
 * A fleet on the real broker whose one tool records every call: a worker (in this process,
 * its HTTP gateway on), and `toolwire mcp serve --http` as a process of its own reading the
 * same config. `probeCalls()` is what ran, for tests that must see that nothing did.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { App } from '../../src/assembly/app.js';
import { captureLogger } from './harness.js';
import { removeDir, startPulsarApp, suffix, waitUntil, writeConfigDir } from './pulsar-app.js';
import { TEST_TRANSPORT } from './transport-under-test.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CALLS = '__toolwireProbeCalls';

export interface ProbeFleet {
  readonly app: App;
  /** The worker's gateway, http://127.0.0.1:<port>. */
  readonly gateway: string;
  /** `mcp serve`'s endpoint, http://127.0.0.1:<port>/mcp. */
  readonly mcp: string;
  /** The `via` argument of every call the tool took, in order. */
  probeCalls(): string[];
  close(): Promise<void>;
}

export async function startProbeFleet(adminUrl: string, env: Readonly<Record<string, string>> = {}): Promise<ProbeFleet> {
  if (!existsSync(join(REPO, 'dist/main.js'))) throw new Error('dist/ is not built: run `npm run build` (npm test does it first)');
  const tag = suffix();
  const dir = await writeConfigDir({
    // One at a time, in the order published: a call published before another has run when that one has.
    services: [
      {
        id: `probe-${tag}`,
        'request-queue': `non-persistent://tg/request/probe-${tag}`,
        'response-queue': `non-persistent://tg/response/probe-${tag}`,
        plugin: { kind: 'module', module: './probe.mjs' },
        concurrency: 1,
      },
    ],
    tools: [
      { name: 'probe', service: `probe-${tag}`, description: 'records that it ran', arguments: [{ name: 'via', type: 'string', description: 'who called' }] },
    ],
  });
  await writeFile(
    join(dir, 'probe.mjs'),
    `export default ({ arguments: a }) => { (globalThis.${CALLS} ??= []).push(String(a.via)); return 'ran ' + a.via; };\n`,
  );
  const { log } = captureLogger('warn');
  let app: App | undefined;
  let child: ChildProcess | undefined;
  try {
    app = await startPulsarApp({ adminUrl, configDir: dir, log, env: { TOOLWIRE_HTTP_PORT: '0', ...env } });
    const c = spawn(
      process.execPath,
      [join(REPO, 'bin/toolwire.js'), 'mcp', 'serve', '--http', '0', '-d', dir, '-T', TEST_TRANSPORT, '--admin-url', adminUrl],
      {
        env: {
          PATH: process.env['PATH'],
          HOME: process.env['HOME'],
          LOG_LEVEL: 'info',
          ...(process.env['PULSAR_URL'] ? { PULSAR_URL: process.env['PULSAR_URL'] } : {}),
          ...env,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    child = c;
    let stderr = '';
    c.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-50_000)));
    let mcp: string | undefined;
    await waitUntil(
      () => {
        if (c.exitCode !== null) throw new Error(`mcp serve exited with ${c.exitCode}:\n${stderr.slice(-3000)}`);
        mcp = /"url":"(http:\/\/[^"]+\/mcp)"/.exec(stderr)?.[1];
        return mcp !== undefined;
      },
      60_000,
      'mcp serve serving',
    );
    const a = app;
    return {
      app: a,
      gateway: `http://127.0.0.1:${a.http!.port}`,
      mcp: mcp!,
      probeCalls: () => [...(((globalThis as Record<string, unknown>)[CALLS] as string[] | undefined) ?? [])],
      async close() {
        c.kill('SIGTERM');
        await a.stop(1_000);
        await removeDir(dir);
      },
    };
  } catch (err) {
    child?.kill('SIGKILL');
    await app?.stop(1_000);
    await removeDir(dir);
    throw err;
  }
}
