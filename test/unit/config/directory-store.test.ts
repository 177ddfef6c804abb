import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryConfigStore } from '../../../src/config/directory-store.js';

describe('DirectoryConfigStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('puts, gets, lists and deletes items as JSON files', async () => {
    const store = new DirectoryConfigStore(dir);
    await store.put([{ type: 'tool', key: 'tell-joke', value: '{"name":"tell-joke"}' }]);
    expect(await store.keys('tool')).toEqual(['tell-joke']);
    expect((await store.get('tool', 'tell-joke'))?.value).toEqual({ name: 'tell-joke' });
    expect(JSON.parse(await readFile(join(dir, 'tool', 'tell-joke.json'), 'utf8'))).toEqual({ name: 'tell-joke' });
    expect(await store.delete('tool', 'tell-joke')).toBe(true);
    expect(await store.delete('tool', 'tell-joke')).toBe(false);
    expect(await store.keys('tool')).toEqual([]);
  });

  it('reads YAML and reports a file that does not parse without failing the rest', async () => {
    await mkdir(join(dir, 'tool'));
    await writeFile(join(dir, 'tool', 'a.yaml'), 'name: a\narguments:\n  - name: x\n');
    await writeFile(join(dir, 'tool', 'b.json'), '{ broken');
    const entries = await new DirectoryConfigStore(dir).entries();
    expect(entries.find((e) => e.key === 'a')?.value).toEqual({ name: 'a', arguments: [{ name: 'x' }] });
    expect(entries.find((e) => e.key === 'b')?.error).toMatch(/not valid JSON/);
  });

  it('refuses a value that is not JSON and a key that would escape the directory', async () => {
    const store = new DirectoryConfigStore(dir);
    await expect(store.put([{ type: 'tool', key: 'x', value: '{nope' }])).rejects.toThrow();
    await expect(store.put([{ type: 'tool', key: '../evil', value: '{}' }])).rejects.toThrow(/invalid config key/);
    expect(await store.keys('tool')).toEqual([]);
  });

  it('treats a missing directory as empty', async () => {
    expect(await new DirectoryConfigStore(join(dir, 'none')).entries()).toEqual([]);
  });
});

describe('DirectoryConfigStore names', () => {
  it('refuses types and keys that would leave the directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwire-store-'));
    const store = new DirectoryConfigStore(join(dir, 'inner'));
    await expect(store.put([{ type: '..', key: 'escaped', value: '{}' }])).rejects.toThrow(/invalid config type/);
    await expect(store.put([{ type: 'tool', key: '..', value: '{}' }])).rejects.toThrow(/invalid config key/);
    await expect(store.keys('../..')).rejects.toThrow(/invalid config type/);
    await expect(store.get('.', 'x')).rejects.toThrow(/invalid config type/);
    expect(await new DirectoryConfigStore(dir).entries()).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });
});
