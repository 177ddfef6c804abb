import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectorySource } from '../../../src/config/directory-source.js';
import { captureLogger } from '../../support/harness.js';

async function until(pred: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await pred()) return;
    await sleep(10);
  }
  throw new Error(`never: ${what}`);
}

describe('DirectorySource', () => {
  let dir: string;
  let source: DirectorySource | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-watch-'));
  });
  afterEach(async () => {
    await source?.close();
    source = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('notices a file written into a type directory (no polling)', async () => {
    await mkdir(join(dir, 'tool'));
    source = new DirectorySource(dir, captureLogger().log, 0);
    let changes = 0;
    await source.watch(() => changes++);
    const before = await source.read();
    await writeFile(join(dir, 'tool', 'a.json'), '{"name":"a"}');
    await until(() => changes > 0, 'a change event');
    const after = await source.read();
    expect(after.entries.map((e) => e.key)).toEqual(['a']);
    expect(after.version).not.toBe(before.version);
  });

  it('reads again only the files an event names: the others are the very entries of the read before', async () => {
    await mkdir(join(dir, 'tool'));
    for (const t of ['a', 'b', 'c']) await writeFile(join(dir, 'tool', `${t}.json`), JSON.stringify({ name: t }));
    source = new DirectorySource(dir, captureLogger().log, 0);
    let changes = 0;
    await source.watch(() => changes++);
    const first = await source.read();
    const entry = (snap: typeof first, key: string) => snap.entries.find((e) => e.key === key);

    await writeFile(join(dir, 'tool', 'b.json'), JSON.stringify({ name: 'b', description: 'changed' }));
    await until(() => changes > 0, 'a change event');
    const second = await source.read();
    expect(entry(second, 'a')).toBe(entry(first, 'a'));
    expect(entry(second, 'c')).toBe(entry(first, 'c'));
    expect(entry(second, 'b')?.value).toEqual({ name: 'b', description: 'changed' });

    changes = 0;
    await rm(join(dir, 'tool', 'c.json'));
    await writeFile(join(dir, 'tool', 'aa.json'), JSON.stringify({ name: 'aa' }));
    await until(() => changes > 1, 'events for both files');
    const third = await source.read();
    // In the order a full read gives.
    expect(third.entries.map((e) => e.key)).toEqual(['a', 'aa', 'b']);
    expect(entry(third, 'a')).toBe(entry(first, 'a'));
  });

  it('follows a Kubernetes ConfigMap mount, whose update swaps the ..data symlink', async () => {
    // The layout the kubelet makes: timestamped data dirs, ..data pointing at the current one,
    // and each visible name a symlink through ..data.
    const generation = async (name: string, tools: string[]) => {
      await mkdir(join(dir, name, 'tool'), { recursive: true });
      for (const t of tools) await writeFile(join(dir, name, 'tool', `${t}.json`), JSON.stringify({ name: t }));
    };
    await generation('..2026_11_23_a', ['a']);
    await symlink('..2026_11_23_a', join(dir, '..data'));
    await symlink('..data/tool', join(dir, 'tool'));
    source = new DirectorySource(dir, captureLogger().log, 0);
    let changes = 0;
    await source.watch(() => changes++);
    expect((await source.read()).entries.map((e) => e.key)).toEqual(['a']);

    const swap = async (name: string) => {
      await symlink(name, join(dir, '..data_tmp'));
      await rename(join(dir, '..data_tmp'), join(dir, '..data'));
    };
    await generation('..2026_11_23_b', ['a', 'b']);
    await swap('..2026_11_23_b');
    await rm(join(dir, '..2026_11_23_a'), { recursive: true });
    await until(() => changes > 0, 'the first swap seen');
    expect((await source.read()).entries.map((e) => e.key)).toEqual(['a', 'b']);

    // Watched again where the data is now: a second swap is seen as well.
    changes = 0;
    await generation('..2026_11_23_c', ['c']);
    await swap('..2026_11_23_c');
    await rm(join(dir, '..2026_11_23_b'), { recursive: true });
    await until(() => changes > 0, 'the second swap seen');
    expect((await source.read()).entries.map((e) => e.key)).toEqual(['c']);
  });

  it('polls a directory that did not exist when it started', async () => {
    const late = join(dir, 'late');
    source = new DirectorySource(late, captureLogger().log, 30);
    let changes = 0;
    await source.watch(() => changes++);
    expect((await source.read()).entries).toEqual([]);
    await mkdir(join(late, 'tool'), { recursive: true });
    await writeFile(join(late, 'tool', 'x.json'), '{"name":"x"}');
    await until(async () => changes > 0 && (await source!.read()).entries.length === 1, 'the late directory read');
  });

  it('leaves no rejection unhandled when its listener throws on a poll, and keeps polling', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const logger = captureLogger();
      source = new DirectorySource(dir, logger.log, 20);
      let calls = 0;
      await source.watch(() => {
        calls++;
        throw new Error('listener broke');
      });
      await until(() => calls >= 3, 'three polls');
      // A rejection is reported after the microtasks of its turn: give the last poll's a turn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(logger.lines().some((line) => line.includes('config change listener failed'))).toBe(true);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
