/**
 * What an MCP server run over stdio gets from the worker: exactly the environment
 * docs/plugins/mcp.md names, and, when the operator sets MCP_STDIO_UID/GID, a user of its own
 * that cannot read the worker's environment through /proc. The server is a real one (the SDK's McpServer over
 * stdio, test/support/mcp-whoami-server.mjs) that reports what it sees. It runs bundled into
 * one file in a directory of its own that every user can read: the checkout may sit where
 * only its owner can enter (a `mktemp -d`, /root), and the server's other user must still read it.
 */
import { build } from 'esbuild';
import { chmod, chown, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpPluginFactory } from '../../../../src/plugins/mcp/mcp-plugin.js';
import type { PluginContext } from '../../../../src/plugins/plugin.js';
import { PluginRegistry } from '../../../../src/plugins/registry.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { directPlugins, type DirectPlugins } from '../../../support/direct-plugins.js';
import { captureLogger, entry } from '../../../support/harness.js';

const WHOAMI_SOURCE = fileURLToPath(new URL('../../../support/mcp-whoami-server.mjs', import.meta.url));
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

interface Whoami {
  env: Record<string, string>;
  uid: number;
  gid: number;
  groups: number[];
  cwd: string;
  ppid: number;
  parentEnviron: string;
}

/** Variables the MCP SDK's own stdio transport adds to a server's environment. */
const SDK_DEFAULTS = ['SHELL', 'TERM', 'USER', 'LOGNAME'];
const saved: Record<string, string | undefined> = {};
const basics = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: '/root', TMPDIR: tmpdir(), LANG: 'C.UTF-8' };
let dir: string;
/** The bundled server, in a directory every user may enter. */
let serverDir: string;
let whoamiServer: string;
const opened: DirectPlugins[] = [];

function services(plugin: Record<string, unknown>) {
  return [
    entry('tool-service', 'who', {
      id: 'who',
      'config-params': ['op'],
      'request-queue': 'non-persistent://tg/request/who',
      'response-queue': 'non-persistent://tg/response/mcp',
      plugin: { kind: 'mcp', transport: 'stdio', command: process.execPath, args: [whoamiServer], ...plugin },
    }),
    entry('tool', 'whoami', { name: 'whoami', service: 'who', op: 'whoami' }),
  ];
}

async function start(plugin: Record<string, unknown>, settings: Record<string, string> = {}): Promise<DirectPlugins> {
  const ctx: PluginContext = {
    log: captureLogger('warn').log,
    configDir: dir,
    secrets: loadSecrets({ WHO_TOKEN: 't-1' }),
    settings: { ...basics, ...settings },
  };
  const p = await directPlugins(services(plugin), new PluginRegistry().register(mcpPluginFactory), ctx);
  opened.push(p);
  return p;
}

async function whoami(plugin: Record<string, unknown>, settings: Record<string, string> = {}): Promise<Whoami> {
  return JSON.parse(await (await start(plugin, settings)).call('whoami')) as Whoami;
}

beforeAll(async () => {
  // The worker's environment has them, as a login shell's does: none may reach the server.
  for (const k of SDK_DEFAULTS) {
    saved[k] = process.env[k];
    process.env[k] ??= `worker-${k.toLowerCase()}`;
  }
  dir = await mkdtemp(join(tmpdir(), 'toolwire-mcp-who-'));
  if (asRoot) await chown(dir, NOBODY, NOBODY);
  serverDir = await mkdtemp(join(tmpdir(), 'toolwire-mcp-who-server-'));
  await chmod(serverDir, 0o755);
  whoamiServer = join(serverDir, 'whoami.mjs');
  await build({
    entryPoints: [WHOAMI_SOURCE],
    outfile: whoamiServer,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    // The SDK's CommonJS dependencies require Node's modules: give the bundle a require.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  await chmod(whoamiServer, 0o644);
});

afterAll(async () => {
  for (const p of opened) await p.close();
  for (const k of SDK_DEFAULTS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  await rm(dir, { recursive: true, force: true });
  await rm(serverDir, { recursive: true, force: true });
});

describe('a stdio MCP server', () => {
  it('gets PATH, HOME, TMPDIR, LANG and what its env lists, nothing else of the worker', async () => {
    const me = await whoami({ env: { EXTRA: 'x', API_KEY: 'env:WHO_TOKEN' } });
    expect(Object.keys(me.env).sort()).toEqual(['API_KEY', 'EXTRA', 'HOME', 'LANG', 'PATH', 'TMPDIR']);
    expect(me.env).toMatchObject({ ...basics, EXTRA: 'x', API_KEY: 't-1' });
    expect(me.ppid).toBe(process.pid);
    expect(me.cwd).toBe(dir);
  });

  it('gets SHELL, TERM, USER or LOGNAME only when its env lists them', async () => {
    const me = await whoami({ env: { SHELL: '/bin/sh', TERM: 'dumb' } });
    expect(me.env).toMatchObject({ SHELL: '/bin/sh', TERM: 'dumb' });
    expect(me.env).not.toHaveProperty('USER');
    expect(me.env).not.toHaveProperty('LOGNAME');
  });

  it.runIf(asRoot)("runs as the operator's MCP_STDIO_UID/GID, in MCP_STDIO_CWD, and cannot read the worker's environment", async () => {
    // As the worker's own user, it can: this is what the settings are for.
    expect((await whoami({})).parentEnviron).toBe('readable');
    const me = await whoami({}, { MCP_STDIO_UID: String(NOBODY), MCP_STDIO_GID: String(NOBODY), MCP_STDIO_CWD: dir });
    expect(me).toMatchObject({ uid: NOBODY, gid: NOBODY, cwd: dir, ppid: process.pid, parentEnviron: 'EACCES' });
    // The worker's supplementary groups (root's) are dropped.
    expect(me.groups).not.toContain(0);
    expect(Object.keys(me.env).sort()).toEqual(['HOME', 'LANG', 'PATH', 'TMPDIR']);
  });

  it.runIf(asRoot)('names the file and the user when MCP_STDIO_UID may not read the server', async () => {
    // A directory only root may enter, as a checkout in /root or a `mktemp -d` is.
    const closed = await mkdtemp(join(tmpdir(), 'toolwire-mcp-who-closed-'));
    try {
      const server = join(closed, 'whoami.mjs');
      await copyFile(whoamiServer, server);
      const err = await start({ args: [server] }, { MCP_STDIO_UID: String(NOBODY), MCP_STDIO_GID: String(NOBODY), MCP_STDIO_CWD: dir }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toContain('the MCP server exited with code 1 before it answered');
      expect(err?.message).toContain(`uid ${NOBODY} (gid ${NOBODY}) cannot enter ${closed} (mode 700, owner 0:0) on the way to ${server}`);
      expect(err?.message).toContain(`its stderr: Error: Cannot find module '${server}'`);
    } finally {
      await rm(closed, { recursive: true, force: true });
    }
  });

  it('refuses a user without its group, or a uid that is not a number, before anything runs', async () => {
    for (const [settings, problem] of [
      [{ MCP_STDIO_UID: String(NOBODY) }, 'settings MCP_STDIO_UID and MCP_STDIO_GID: set both or neither'],
      [{ MCP_STDIO_UID: 'nobody', MCP_STDIO_GID: '1' }, 'setting MCP_STDIO_UID: must be a whole number (digits only), got "nobody"'],
    ] as const) {
      const err = await start({}, settings).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toContain(problem);
    }
  });
});
