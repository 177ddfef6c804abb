import { describe, expect, it } from 'vitest';
import { PayloadTooLargeError, ToolFailedError } from '../../../../src/errors.js';
import { BLOB_FILE_MAX_BYTES, BlobChunkMerger } from '../../../../src/plugins/dify-common/blob-merger.js';
import type { BlobChunkMessage } from '../../../../src/plugins/dify-common/invoke-message.js';

function chunk(id: string, sequence: number, data: Buffer, end = false, total?: number, meta: Record<string, unknown> | null = null): BlobChunkMessage {
  return { type: 'blob_chunk', message: { id, sequence, total_length: total, blob: data.toString('base64'), end }, meta };
}

describe('BlobChunkMerger', () => {
  it('merges chunks per id, in order, with the end chunk meta', () => {
    const m = new BlobChunkMerger();
    expect(m.push(chunk('a', 0, Buffer.from('he')))).toBeUndefined();
    expect(m.push(chunk('b', 0, Buffer.from('xy')))).toBeUndefined();
    expect(m.push(chunk('a', 1, Buffer.from('llo')))).toBeUndefined();
    const a = m.push(chunk('a', 2, Buffer.alloc(0), true, 5, { mime_type: 'text/plain' }));
    expect(a?.data.toString()).toBe('hello');
    expect(a?.meta).toEqual({ mime_type: 'text/plain' });
    expect(m.unfinished()).toEqual([{ id: 'b', chunks: 1, bytes: 2 }]);
  });

  it('merges an empty blob sent as one end chunk', () => {
    const merged = new BlobChunkMerger().push(chunk('e', 0, Buffer.alloc(0), true, 0));
    expect(merged?.data.length).toBe(0);
  });

  it('takes the 8,192-byte chunks the daemon cuts with room to spare, and refuses one over 64 KiB', () => {
    expect(new BlobChunkMerger().push(chunk('a', 0, Buffer.alloc(8192 * 2), true))?.data.length).toBe(16384);
    expect(() => new BlobChunkMerger().push(chunk('b', 0, Buffer.alloc(65537)))).toThrow(/chunk of 65537 bytes for file b; chunks are limited to 65536 bytes/);
  });

  it('refuses a file once it passes 30 MiB, even when no size was announced', () => {
    const m = new BlobChunkMerger();
    const piece = Buffer.alloc(8192);
    let err: unknown;
    let seq = 0;
    try {
      for (; seq < 4000; seq++) m.push(chunk('big', seq, piece));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect(seq).toBe(BLOB_FILE_MAX_BYTES / 8192);
    expect(m.unfinished()).toEqual([]);
  });

  it('refuses a file whose announced size is over the limit at its first chunk', () => {
    expect(() => new BlobChunkMerger().push(chunk('big', 0, Buffer.alloc(10), false, 40 * 1024 * 1024))).toThrow(PayloadTooLargeError);
  });

  it('refuses a chunk out of sequence, a repeated one and a late start', () => {
    const m = new BlobChunkMerger();
    m.push(chunk('a', 0, Buffer.from('x')));
    expect(() => m.push(chunk('a', 0, Buffer.from('x')))).toThrow(ToolFailedError);
    expect(() => new BlobChunkMerger().push(chunk('c', 1, Buffer.from('x')))).toThrow(/out of order \(chunk 1 where chunk 0 was due\)/);
  });

  it('reports files without an end chunk when the stream is over', () => {
    const m = new BlobChunkMerger();
    m.push(chunk('a', 0, Buffer.from('abc')));
    m.push(chunk('b', 0, Buffer.from('d')));
    expect(() => m.finish()).toThrow(
      "tool invoke error: the tool's output ended before file a was complete (1 chunks, 3 bytes received, no end chunk) (and 1 more)",
    );
    expect(() => m.finish()).not.toThrow();
  });

  it('starts over when an id comes back after its end chunk', () => {
    const m = new BlobChunkMerger();
    m.push(chunk('a', 0, Buffer.from('1'), true));
    expect(m.push(chunk('a', 0, Buffer.from('2'), true))?.data.toString()).toBe('2');
  });
});

describe('BlobChunkMerger bounds', () => {
  it('refuses a file beyond the number it may receive at once', () => {
    const m = new BlobChunkMerger({ chunkMaxBytes: 8192, fileMaxBytes: 1024, openMax: 2 });
    m.push(chunk('a', 0, Buffer.from('x')));
    m.push(chunk('b', 0, Buffer.from('x')));
    expect(() => m.push(chunk('c', 0, Buffer.from('x')))).toThrow(/more than 2 files at once/);
    // A finished file makes room.
    m.push(chunk('a', 1, Buffer.alloc(0), true));
    expect(m.push(chunk('c', 0, Buffer.from('x')))).toBeUndefined();
  });
});
