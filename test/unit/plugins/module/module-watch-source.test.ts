/**
 * What `run --watch` makes of saves: one change (and one log line) per save, a new revision
 * for the module saved and for no other, and nothing for an editor's temporary files.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigSnapshot, ConfigSource } from '../../../../src/config/config-source.js';
import { isEditorTemp, ModuleWatchSource } from '../../../../src/plugins/module/module-watch-source.js';
import { captureLogger, entry } from '../../../support/harness.js';

const service = (id: string) =>
  entry('tool-service', id, {
    id,
    'request-queue': `non-persistent://tg/request/${id}`,
    'response-queue': `non-persistent://tg/response/${id}`,
    plugin: { kind: 'module', module: `./tools/${id}.mjs` },
  });

const revisionOf = (snap: ConfigSnapshot, id: string) =>
  (snap.entries.find((e) => (e.value as { id?: string }).id === id)!.value as { plugin: { revision: string } }).plugin.revision;

async function until(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`not in time: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the module watch of run --watch', () => {
  let dir: string;
  let source: ModuleWatchSource;
  let changes: number;
  let logged: () => string[];

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'toolwire-watch-')));
    await mkdir(join(dir, 'tools'));
    for (const id of ['a', 'b']) await writeFile(join(dir, 'tools', `${id}.mjs`), `export default () => '${id}';\n`);
    const inner: ConfigSource = {
      description: 'test',
      watch: () => Promise.resolve(),
      read: () => Promise.resolve({ version: '1', entries: [service('a'), service('b')] }),
      close: () => Promise.resolve(),
    };
    const capture = captureLogger('info');
    logged = () => capture.lines().filter((line) => line.includes('module changed'));
    source = new ModuleWatchSource(inner, dir, capture.log);
    changes = 0;
    await source.watch(() => changes++);
  });
  afterEach(async () => {
    await source.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads one save as one change, logged once, that gives the saved module alone a new revision', async () => {
    const before = await source.read();
    // One save is several events (truncate, write); Node's watch reported each as a change.
    await writeFile(join(dir, 'tools', 'a.mjs'), `export default () => 'a2';\n`);
    await until('the save seen', () => changes > 0);
    const after = await source.read();
    expect(revisionOf(after, 'a')).not.toBe(revisionOf(before, 'a'));
    expect(revisionOf(after, 'b')).toBe(revisionOf(before, 'b'));
    // A later save of b: by the time it is seen, whatever a's save made has been seen too.
    await writeFile(join(dir, 'tools', 'b.mjs'), `export default () => 'b2';\n`);
    await until('the second save seen', () => changes > 1);
    expect(changes).toBe(2);
    expect(logged().map((line) => JSON.parse(line) as unknown)).toEqual([
      expect.objectContaining({ files: [join(dir, 'tools', 'a.mjs')], modules: [join(dir, 'tools', 'a.mjs')] }),
      expect.objectContaining({ files: [join(dir, 'tools', 'b.mjs')], modules: [join(dir, 'tools', 'b.mjs')] }),
    ]);
  });

  it('gives every module of the directory a new revision when another file there (a helper) changes', async () => {
    const before = await source.read();
    await writeFile(join(dir, 'tools', 'shared.mjs'), `export const x = 1;\n`);
    await until('the save seen', () => changes > 0);
    const after = await source.read();
    expect(revisionOf(after, 'a')).not.toBe(revisionOf(before, 'a'));
    expect(revisionOf(after, 'b')).not.toBe(revisionOf(before, 'b'));
  });

  it("ignores an editor's temporary files: swap, backup, lock and probe files are no change", async () => {
    const before = await source.read();
    for (const name of ['.a.mjs.swp', '.a.mjs.swx', 'a.mjs~', '.#a.mjs', '#a.mjs#', '4913', 'a.mjs___jb_tmp___']) {
      expect(isEditorTemp(name)).toBe(true);
      await writeFile(join(dir, 'tools', name), 'x');
    }
    // A real save after them: what it logs names it alone, and the other module keeps its revision.
    await writeFile(join(dir, 'tools', 'a.mjs'), `export default () => 'a2';\n`);
    await until('the save seen', () => changes > 0);
    const after = await source.read();
    expect(
      logged()
        .map((line) => (JSON.parse(line) as { files: string[] }).files)
        .flat(),
    ).toEqual([join(dir, 'tools', 'a.mjs')]);
    expect(revisionOf(after, 'b')).toBe(revisionOf(before, 'b'));
    expect(isEditorTemp('a.mjs')).toBe(false);
  });
});
