import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import type { Catalog } from '../../../src/catalog/catalog.js';
import { ConfigFollower } from '../../../src/config/config-follower.js';
import type { ConfigSnapshot, ConfigSource } from '../../../src/config/config-source.js';
import type { ConfigEntry } from '../../../src/config/config-store.js';
import { ConfigError } from '../../../src/errors.js';
import { captureLogger, catalogOf, entry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';

/** A source the test moves by hand: what it holds, and a count of reads. */
class HandSource implements ConfigSource {
  readonly description = 'hand source';
  entries: ConfigEntry[] = [];
  version = 1;
  reads = 0;
  /** While set, a read waits for it. */
  hold: Promise<void> | undefined;
  private changed: (() => void) | undefined;

  async watch(changed: () => void): Promise<void> {
    this.changed = changed;
  }

  async read(): Promise<ConfigSnapshot> {
    this.reads++;
    // What the read returns is what the source held when it began.
    const snap = { version: String(this.version), entries: [...this.entries] };
    await this.hold;
    return snap;
  }

  set(entries: ConfigEntry[]): void {
    this.entries = entries;
    this.version++;
    this.changed?.();
  }

  poke(): void {
    this.changed?.();
  }

  async close(): Promise<void> {}
}

const svc = entry('tool-service', 's', service('s', { 'config-params': ['kind'] }));
const tool = (name: string, k = name) => entry('tool', name, { name, service: 's', kind: k });

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !pred(); i++) await sleep(10);
  if (!pred()) throw new Error(`never: ${what}`);
}

function follower(source: HandSource) {
  const { log, lines } = captureLogger();
  const applied: Catalog[] = [];
  const f = new ConfigFollower({ source, build: (entries) => catalogOf([...entries]), log, settleMs: 20 });
  return { f, applied, lines, apply: async (c: Catalog) => void applied.push(c) };
}

describe('ConfigFollower', () => {
  it('reads a burst of changes once', async () => {
    const source = new HandSource();
    source.entries = [svc, tool('a')];
    const { f, applied, apply } = follower(source);
    await f.start({ serveEmpty: false });
    f.follow(apply);
    for (let n = 0; n < 10; n++) source.set([svc, tool('a'), ...Array.from({ length: n + 1 }, (_, i) => tool(`t${i}`))]);
    await until(() => applied.length === 1, 'one reload');
    await sleep(100);
    expect(applied).toHaveLength(1);
    expect([...applied[0]!.tools.keys()]).toHaveLength(11);
    expect(source.reads).toBe(2);
    expect(f.status()).toMatchObject({ version: '11', rejected: undefined, reloads: { applied: 2, rejected: 0, failed: 0 } });
    await f.close();
  });

  it('reads once more after changes that came while it was reading', async () => {
    const source = new HandSource();
    source.entries = [svc, tool('a')];
    const { f, applied, apply } = follower(source);
    await f.start({ serveEmpty: false });
    f.follow(apply);
    let release!: () => void;
    source.hold = new Promise((resolve) => (release = resolve));
    source.set([svc, tool('a'), tool('b')]);
    await until(() => source.reads === 2, 'a read under way');
    source.set([svc, tool('a'), tool('b'), tool('c')]);
    source.set([svc, tool('a'), tool('b'), tool('c'), tool('d')]);
    source.hold = undefined;
    release();
    await until(() => applied.length === 2, 'the second reload');
    await sleep(100);
    expect(source.reads).toBe(3);
    expect([...applied[1]!.tools.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
    await f.close();
  });

  it('refuses an invalid change, logs each problem once, and clears the refusal when the source is fixed', async () => {
    const source = new HandSource();
    source.entries = [svc, tool('a')];
    const { f, applied, apply, lines } = follower(source);
    await f.start({ serveEmpty: false });
    f.follow(apply);
    source.set([svc, tool('a'), entry('tool', 'bad', { name: 'bad', service: 'nowhere' })]);
    await until(() => f.status().rejected !== undefined, 'refused');
    // The same content read again (a poll, a poke for another type) is not refused again.
    source.poke();
    source.poke();
    await sleep(100);
    const status = f.status();
    expect(status.version).toBe('1');
    expect(status.rejected).toMatchObject({ version: '2', problems: [expect.stringMatching(/^tool\/bad\.json: service: unknown tool-service "nowhere"/)] });
    expect(status.reloads.rejected).toBe(1);
    expect(applied).toHaveLength(0);
    expect(lines().filter((l) => l.includes('refused'))).toHaveLength(1);
    source.set([svc, tool('a'), tool('b')]);
    await until(() => applied.length === 1, 'applied after the fix');
    expect(f.status()).toMatchObject({ version: '3', rejected: undefined });
    await f.close();
  });

  it('reads again by itself while its source is away, and says so once, not at every retry', async () => {
    const source = new HandSource();
    source.entries = [svc, tool('a')];
    const { log, lines } = captureLogger('info');
    const applied: Catalog[] = [];
    const f = new ConfigFollower({ source, build: (entries) => catalogOf([...entries]), log, settleMs: 5, retry: { initialDelayMs: 5, maxDelayMs: 20 } });
    await f.start({ serveEmpty: false });
    f.follow(async (c) => void applied.push(c));
    // The source goes away (a broker outage): every read fails until it is back.
    const read = source.read.bind(source);
    let away = true;
    source.read = async () => {
      if (away) {
        source.reads++;
        throw new Error('the config service did not answer');
      }
      return read();
    };
    const before = source.reads;
    // A change made while it is away, announced once: it must not wait for another poke.
    source.set([svc, tool('a'), tool('b')]);
    await until(() => source.reads >= before + 10, 'ten failed reads');
    away = false;
    await until(() => applied.length === 1, 'the change applied once the source is back');
    expect([...applied[0]!.tools.keys()].sort()).toEqual(['a', 'b']);
    await until(() => lines().some((l) => l.includes('config read again')), 'the recovery said');
    const said = lines().map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(said.filter((m) => m.startsWith('cannot read the config'))).toHaveLength(1);
    expect(said.filter((m) => m === 'config read again')).toHaveLength(1);
    expect(said.filter((m) => m === 'config reload failed')).toEqual([]);
    await f.close();
  });

  it('tries a change it could not apply again on its own backoff, not at every read, and says so once each way', async () => {
    const source = new HandSource();
    source.entries = [svc, tool('a')];
    const { log, lines } = captureLogger('debug');
    const applies: Catalog[] = [];
    const f = new ConfigFollower({
      source,
      build: (entries) => catalogOf([...entries]),
      log,
      settleMs: 5,
      // Long enough that the reads below all fall inside the first delay.
      applyRetry: { initialDelayMs: 400, maxDelayMs: 800 },
    });
    await f.start({ serveEmpty: false });
    let fail = true;
    f.follow(async (c) => {
      applies.push(c);
      if (fail) throw new Error('pulsar-ws: cannot open consumer: HTTP 403 not authorized');
    });
    source.set([svc, tool('a'), tool('b')]);
    await until(() => f.status().reloads.failed === 1, 'the first failure');
    // A poll or a push for another type reads the same change again: it is not applied again.
    const readsBefore = source.reads;
    for (let i = 0; i < 5; i++) {
      source.poke();
      await until(() => source.reads > readsBefore + i, `read ${i + 1}`);
    }
    expect(applies).toHaveLength(1);
    expect(f.status().rejected?.problems).toEqual(['could not be applied: pulsar-ws: cannot open consumer: HTTP 403 not authorized']);
    // The backoff runs out: tried again, and again, each delay longer.
    await until(() => f.status().reloads.failed >= 3, 'two more attempts on the backoff');
    fail = false;
    await until(() => f.status().rejected === undefined, 'applied once the permission is there');
    expect(f.status().version).toBe('2');
    const said = lines().map((l) => JSON.parse(l) as { msg: string; level: number; retryInMs?: number });
    expect(said.filter((l) => l.msg.startsWith('config change could not be applied'))).toHaveLength(1);
    expect(said.filter((l) => l.msg === 'config change applied after failed attempts')).toHaveLength(1);
    const delays = said.filter((l) => l.retryInMs !== undefined).map((l) => l.retryInMs!);
    expect(delays.length).toBeGreaterThanOrEqual(3);
    // Equal jitter: the nth delay lies in [ceiling/2, ceiling], the ceiling doubling to its cap.
    expect(delays[0]).toBeGreaterThanOrEqual(200);
    expect(delays[0]).toBeLessThanOrEqual(400);
    expect(delays[1]).toBeGreaterThanOrEqual(400);
    await f.close();
  });

  it('drops a change that could not be applied when it is taken back', async () => {
    const source = new HandSource();
    source.entries = [svc, tool('a')];
    const { log, lines } = captureLogger('info');
    const f = new ConfigFollower({ source, build: (entries) => catalogOf([...entries]), log, settleMs: 5, applyRetry: { initialDelayMs: 60_000 } });
    await f.start({ serveEmpty: false });
    f.follow(async () => {
      throw new Error('refused');
    });
    source.set([svc, tool('a'), tool('b')]);
    await until(() => f.status().reloads.failed === 1, 'failed');
    source.set([svc, tool('a')]);
    await until(() => f.status().rejected === undefined, 'taken back');
    expect(lines().some((l) => (JSON.parse(l) as { msg: string }).msg === 'the change that could not be applied was taken back')).toBe(true);
    await f.close();
  });

  it('says a fault of the build itself once, as what it is, and does not read again for it', async () => {
    const source = new HandSource();
    source.entries = [svc, tool('a')];
    const { log, lines } = captureLogger('info');
    const applied: Catalog[] = [];
    const build = (entries: readonly ConfigEntry[]) => {
      // A plugin check with a bug.
      if (entries.some((e) => e.key === 'buggy')) throw new TypeError("Cannot read properties of undefined (reading 'url')");
      return catalogOf([...entries]);
    };
    const f = new ConfigFollower({ source, build, log, settleMs: 5, retry: { initialDelayMs: 5, maxDelayMs: 20 } });
    await f.start({ serveEmpty: false });
    f.follow(async (c) => void applied.push(c));
    source.set([svc, tool('a'), tool('buggy')]);
    await until(() => f.status().reloads.failed === 1, 'the fault reported');
    expect(f.status().rejected).toMatchObject({ version: '2', problems: ["could not be checked: Cannot read properties of undefined (reading 'url')"] });
    source.set([svc, tool('a'), tool('b')]);
    await until(() => applied.length === 1, 'the next change applied');
    const said = lines().map((l) => (JSON.parse(l) as { msg: string }).msg);
    expect(said.filter((m) => m.startsWith('config change could not be checked'))).toHaveLength(1);
    expect(said.filter((m) => m.startsWith('cannot read the config'))).toEqual([]);
    // One read per change: the faulty version was not read again.
    expect(source.reads).toBe(3);
    await f.close();
    // At start, such a fault is thrown, not retried.
    const first = new ConfigFollower({ source: Object.assign(new HandSource(), { entries: [svc, tool('buggy')] }), build, log });
    await expect(first.start({ serveEmpty: true })).rejects.toBeInstanceOf(TypeError);
  });

  it('reads no more once a read succeeds after a failed one (the pending retry is dropped)', async () => {
    vi.useFakeTimers();
    try {
      const source = new HandSource();
      source.entries = [svc, tool('a')];
      const { log } = captureLogger('info');
      const applied: Catalog[] = [];
      const f = new ConfigFollower({
        source,
        build: (entries) => catalogOf([...entries]),
        log,
        settleMs: 5,
        retry: { initialDelayMs: 1_000, maxDelayMs: 1_000 },
      });
      await f.start({ serveEmpty: false });
      f.follow(async (c) => void applied.push(c));
      const read = source.read.bind(source);
      let fail = true;
      source.read = async () => {
        if (!fail) return read();
        fail = false;
        source.reads++;
        throw new Error('the config service did not answer');
      };
      source.set([svc, tool('a'), tool('b')]);
      await vi.advanceTimersByTimeAsync(5);
      expect(source.reads).toBe(2);
      // A change announced before the retry is due: read at once, and it succeeds.
      source.poke();
      await vi.advanceTimersByTimeAsync(5);
      expect([source.reads, applied.length]).toEqual([3, 1]);
      await vi.advanceTimersByTimeAsync(5_000);
      expect(source.reads).toBe(3);
      await f.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('starts on an invalid source only when asked to serve nothing until it is valid', async () => {
    const source = new HandSource();
    source.entries = [tool('orphan')];
    await expect(follower(source).f.start({ serveEmpty: false })).rejects.toBeInstanceOf(ConfigError);
    const { f, applied, apply } = follower(source);
    const first = await f.start({ serveEmpty: true });
    expect(first.services.size).toBe(0);
    expect(f.status().version).toBeUndefined();
    expect(f.status().rejected?.problems[0]).toMatch(/unknown tool-service "s"/);
    f.follow(apply);
    source.set([svc, tool('orphan')]);
    await until(() => applied.length === 1, 'applied once valid');
    expect(f.status().version).toBe('2');
    await f.close();
  });
});
