/**
 * What a started worker has loaded: a package imported at start stays on the heap and is
 * marked by every full collection for the life of the process, so those only some plugin
 * kinds need are imported with their kinds (undici alone is 5 MB of heap).
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const START_AND_LIST = `
const { startApp } = await import('./dist/assembly/app.js');
const { readSettings } = await import('./dist/settings.js');
const { loadSecrets } = await import('./dist/secrets.js');
const { MemoryTransport } = await import('./dist/transport/memory-transport.js');
const { createLogger } = await import('./dist/logging.js');
const { createRequire } = await import('node:module');
const settings = readSettings({ TOOLWIRE_CONFIG_DIR: process.argv[1], TOOLWIRE_HTTP_PORT: '0', TOOLWIRE_CONFIG_POLL_MS: '0' });
const app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: createLogger({ level: 'silent' }) });
const loaded = new Set(Object.keys(createRequire(import.meta.url).cache).map((p) => /node_modules\\/((@[^/]+\\/)?[^/]+)\\//.exec(p)?.[1]).filter(Boolean));
await app.stop(1000);
process.stdout.write(JSON.stringify([...loaded].sort()));
`;

async function packagesLoadedServing(configDir: string): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', START_AND_LIST, configDir], { timeout: 60_000 });
  return JSON.parse(stdout) as string[];
}

describe('a started worker', () => {
  it('serving module tools, with its HTTP surface, has not loaded undici (only the kinds that fetch need it)', async () => {
    const loaded = await packagesLoadedServing('config');
    // The listing sees what is loaded: the logger and the metrics are.
    expect(loaded).toEqual(expect.arrayContaining(['pino', 'prom-client']));
    expect(loaded).not.toContain('undici');
  });

  it('reads YAML descriptors with the YAML reader, and JSON ones without loading it', async () => {
    // The example config holds one YAML tool (current-time.yaml).
    expect(await packagesLoadedServing('config')).toContain('yaml');
    const dir = await mkdtemp(join(tmpdir(), 'toolwire-json-config-'));
    try {
      // cp makes the type folders a file is copied into.
      await cp('config/tool-service/echo-service.json', join(dir, 'tool-service', 'echo-service.json'));
      await cp('config/tool/echo.json', join(dir, 'tool', 'echo.json'));
      const loaded = await packagesLoadedServing(dir);
      expect(loaded).toContain('pino');
      expect(loaded).not.toContain('yaml');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
