import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { difySlimPluginFactory } from '../../../../src/plugins/dify-slim/dify-slim-plugin.js';
import type { PluginFactory } from '../../../../src/plugins/plugin.js';
import { harness, type Harness } from '../dify-common/harness.js';

export const FAKE_SLIM = join(dirname(fileURLToPath(import.meta.url)), '../../../fakes/fake-slim.mjs');
export const CREDENTIAL = 'slim-credential-93be1f0a77';
export const DAEMON_KEY = 'slim-daemon-key-4c2d8e61b0';

export interface SlimRecord {
  argv: string[];
  env: Record<string, string>;
  stdin: string;
  pid: number;
  cwd: string;
  uid: number | undefined;
  attempt: number;
}

/** A fresh checksum per harness, so each test finds its own runs' records. */
export interface SlimHarness extends Harness {
  readonly checksum: string;
  records(): Promise<SlimRecord[]>;
  cleanup(): Promise<void>;
}

export async function slimHarness(o: { mode?: 'remote' | 'local'; settings?: Record<string, string>; tools: string[] }): Promise<SlimHarness> {
  const checksum = randomBytes(8).toString('hex');
  const mode = o.mode ?? 'remote';
  const h = await harness({
    factory: difySlimPluginFactory as unknown as PluginFactory<never, never>,
    kind: 'dify-slim',
    settings: {
      DIFY_SLIM_PATH: FAKE_SLIM,
      DIFY_SLIM_MODE: mode,
      ...(mode === 'remote'
        ? { DIFY_SLIM_DAEMON_ADDR: 'http://127.0.0.1:9', DIFY_SLIM_DAEMON_KEY: DAEMON_KEY }
        : { DIFY_SLIM_FOLDER: join(tmpdir(), 'fake-slim-plugins') }),
      DIFY_SLIM_RETRY_BASE_MS: '1',
      DIFY_SLIM_RETRY_MAX_MS: '5',
      DIFY_SLIM_KILL_GRACE_MS: '300',
      PATH: process.env['PATH'],
      TMPDIR: tmpdir(),
      ...o.settings,
    },
    env: { SEARCH_KEY: CREDENTIAL, SECRET_UNRELATED: 'never-pass-me' },
    servicePlugin: {
      plugin_unique_identifier: `langgenius/search:0.0.1@${checksum}`,
      provider: 'langgenius/search/search',
      credentials: { api_key: 'env:SEARCH_KEY' },
    },
    tools: o.tools.map((t) => ({ name: t.replace(/_/g, '-'), 'plugin-options': { tool: t } })),
  });
  const prefix = `fake-slim-${checksum}-`;
  return {
    ...h,
    checksum,
    async records() {
      const files = (await readdir(tmpdir())).filter((f) => f.startsWith(prefix)).sort();
      return Promise.all(files.map(async (f) => JSON.parse(await readFile(join(tmpdir(), f), 'utf8')) as SlimRecord));
    },
    async cleanup() {
      const files = (await readdir(tmpdir())).filter((f) => f.startsWith(prefix));
      await Promise.all(files.map((f) => rm(join(tmpdir(), f), { force: true })));
    },
  };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
