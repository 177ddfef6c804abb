import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PayloadTooLargeError, ToolFailedError } from '../../../../src/errors.js';
import { startFakeDifyDaemon, type FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { blobChunks, float, image, json, link, log, text, variable } from '../../../fakes/dify-wire.js';
import { daemonHarness } from './setup.js';

describe('dify-daemon: invoke messages become the observation', () => {
  let daemon: FakeDifyDaemon;
  let blobDir: string;
  beforeEach(async () => {
    daemon = await startFakeDifyDaemon({ plugins: ['langgenius/search'] });
    blobDir = await mkdtemp(join(tmpdir(), 'toolwire-blobs-'));
  });
  afterEach(async () => {
    await daemon.close();
    await rm(blobDir, { recursive: true, force: true });
  });

  it("applies Dify's text rules, puts JSON after the text, and keeps logs and variables out", async () => {
    daemon.script('web_search', async (c) => {
      await c.message(json({ score: float(1), tags: ['a'] }));
      await c.message(text('Found 2. '));
      await c.message(log('search', 'success', { hits: 2 }));
      await c.message(variable('count', 2));
      await c.message(link('https://example.com/r'));
      await c.message(image('https://example.com/i.png'));
      await c.message(json({ hidden: true }, true));
    });
    const h = await daemonHarness(daemon);
    const out = await h.call('web-search', { query: 'q' });
    expect(out).toBe(
      'Found 2. result link: https://example.com/r. please tell user to check it.' +
        'image has been created and sent to user already, you do not need to create it, just tell the user to check it now.' +
        '{"score": 1, "tags": ["a"]}',
    );
    const logLine = h.logs.lines.find((l) => l.includes('tool log message'));
    expect(logLine).toBeDefined();
    expect(JSON.parse(logLine ?? '{}')).toMatchObject({ toolLog: { label: 'search', status: 'success' }, data: { hits: 2 } });
  });

  it('skips a JSON part that repeats a text part', async () => {
    daemon.script('web_search', async (c) => {
      await c.message(text('{"a": 1}'));
      await c.message(json({ a: 1 }));
      await c.message(text('{"b":2}'));
      await c.message(json({ b: 2 }));
      await c.message(json({ c: 3 }));
    });
    const h = await daemonHarness(daemon);
    expect(await h.call('web-search', { query: 'q' })).toBe('{"a": 1}{"b":2}{"c": 3}');
  });

  it('merges a 10 MB blob, stores it, and describes it instead of printing it', async () => {
    const data = Buffer.alloc(10 * 1024 * 1024);
    for (let i = 0; i < data.length; i += 4096) data[i] = i % 251;
    daemon.script('web_search', async (c) => {
      await c.message(text('Here is the chart. '));
      for (const m of blobChunks('0123456789abcdef0123456789abcdef', data, { mime_type: 'image/png', filename: 'chart.png' })) await c.message(m);
    });
    const h = await daemonHarness(daemon, { settings: { DIFY_BLOB_DIR: blobDir } });
    const out = await h.call('web-search', { query: 'q' });
    const files = await readdir(blobDir);
    expect(files).toHaveLength(1);
    const stored = join(blobDir, files[0] ?? '');
    expect(stored.endsWith('.png')).toBe(true);
    expect((await readFile(stored)).equals(data)).toBe(true);
    expect(out).toBe(`Here is the chart. [file chart.png: image/png, 10.0 MiB (10485760 bytes), saved to ${stored}]`);
  });

  it('describes a file it could not keep when no file store is configured', async () => {
    daemon.script('web_search', async (c) => {
      for (const m of blobChunks('ffffffffffffffffffffffffffffffff', Buffer.from('%PDF-1.4 small'), { mime_type: 'application/pdf' })) await c.message(m);
    });
    const h = await daemonHarness(daemon);
    expect(await h.call('web-search', { query: 'q' })).toBe('[file: application/pdf, 14 bytes, not kept (this worker has no file store configured)]');
  });

  it('refuses a 40 MB blob with a clear error', async () => {
    const data = Buffer.alloc(40 * 1024 * 1024);
    daemon.script('web_search', async (c) => {
      for (const m of blobChunks('40404040404040404040404040404040', data, { mime_type: 'video/mp4' })) {
        await c.message(m);
        if (c.request.clientClosedEarly) return;
      }
    });
    const h = await daemonHarness(daemon);
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect((err as Error).message).toBe(
      'tool invoke error: the tool sent a file larger than the 30.0 MiB limit (file 40404040404040404040404040404040: announced 40.0 MiB); it was refused',
    );
  });

  it('reports a stream that ends before a file is complete', async () => {
    daemon.script('web_search', async (c) => {
      const chunks = blobChunks('abababababababababababababababab', Buffer.alloc(20_000, 7), { mime_type: 'image/png' });
      for (const m of chunks.slice(0, 2)) await c.message(m);
    });
    const h = await daemonHarness(daemon);
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolFailedError);
    expect((err as Error).message).toBe(
      "tool invoke error: the tool's output ended before file abababababababababababababababab was complete (2 chunks, 16384 bytes received, no end chunk)",
    );
  });

  it('reports a chunk out of sequence', async () => {
    daemon.script('web_search', async (c) => {
      const chunks = blobChunks('cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd', Buffer.alloc(30_000, 1), null);
      await c.message(chunks[0]!);
      await c.message(chunks[2]!);
    });
    const h = await daemonHarness(daemon);
    await expect(h.call('web-search', { query: 'q' })).rejects.toThrow(
      new ToolFailedError(
        'tool invoke error: the tool sent file cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd out of order (chunk 2 where chunk 1 was due); the file cannot be rebuilt',
      ),
    );
  });

  it('reads sequence numbers the daemon wrote as floats', async () => {
    daemon.script('web_search', async (c) => {
      for (const m of blobChunks('01010101010101010101010101010101', Buffer.alloc(9000, 2), { mime_type: 'text/plain' })) {
        await c.message({ ...m, message: { ...m.message, sequence: float(m.message['sequence'] as number) } });
      }
    });
    const h = await daemonHarness(daemon);
    expect(await h.call('web-search', { query: 'q' })).toMatch(/^\[file: text\/plain, 8\.8 KiB \(9000 bytes\)/);
  });
});
