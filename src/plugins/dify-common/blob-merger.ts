import { PayloadTooLargeError, ToolFailedError } from '../../errors.js';
import type { BlobChunkMessage } from './invoke-message.js';

/**
 * The SDK and the daemon cut files into chunks of exactly 8,192 bytes (seen on the real
 * daemon); a check at that size would refuse the first daemon that cuts a little larger. The
 * bound on a chunk only stops a plugin that never ends one; a merged file is bounded at 30 MiB.
 */
export const BLOB_CHUNK_MAX_BYTES = 64 * 1024;
export const BLOB_FILE_MAX_BYTES = 30 * 1024 * 1024;

export interface BlobLimits {
  readonly chunkMaxBytes: number;
  readonly fileMaxBytes: number;
  /** Files being received at once (each bounded by fileMaxBytes); default 16. */
  readonly openMax?: number;
}

export const BLOB_OPEN_MAX = 16;

export interface MergedBlob {
  readonly id: string;
  readonly data: Buffer;
  /** The end chunk's meta (every chunk carries the original). */
  readonly meta: Record<string, unknown> | null;
  /** What the first chunk announced, for a consistency check; undefined when absent. */
  readonly declaredLength: number | undefined;
}

interface Pending {
  chunks: Buffer[];
  size: number;
  next: number;
  declaredLength: number | undefined;
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * Merges `blob_chunk` messages into whole files, per id, in arrival order. Unlike Dify it
 * checks `sequence` and, through `finish`, reports a file whose end chunk never came
 * (Dify drops both silently). A file over the limit is refused as soon as that is known
 * (announced by `total_length` or reached), so a huge blob is never held in memory.
 */
export class BlobChunkMerger {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly limits: BlobLimits = { chunkMaxBytes: BLOB_CHUNK_MAX_BYTES, fileMaxBytes: BLOB_FILE_MAX_BYTES }) {}

  /** Take one chunk; returns the merged file when this was its end chunk. */
  push(msg: BlobChunkMessage): MergedBlob | undefined {
    const { id, sequence, end } = msg.message;
    let p = this.pending.get(id);
    if (!p) {
      const openMax = this.limits.openMax ?? BLOB_OPEN_MAX;
      if (this.pending.size >= openMax) {
        throw new PayloadTooLargeError(
          `tool invoke error: the tool sent more than ${openMax} files at once (file ${id} would be one more); the answer was refused`,
        );
      }
      const declared = msg.message.total_length ?? undefined;
      if (declared !== undefined && declared > this.limits.fileMaxBytes) {
        throw this.tooLarge(id, `announced ${mib(declared)}`);
      }
      p = { chunks: [], size: 0, next: 0, declaredLength: declared };
      this.pending.set(id, p);
    }
    if (sequence !== p.next) {
      this.pending.delete(id);
      throw new ToolFailedError(
        `tool invoke error: the tool sent file ${id} out of order (chunk ${sequence} where chunk ${p.next} was due); the file cannot be rebuilt`,
      );
    }
    const data = Buffer.from(msg.message.blob, 'base64');
    if (data.length > this.limits.chunkMaxBytes) {
      this.pending.delete(id);
      throw new ToolFailedError(
        `tool invoke error: the tool sent a chunk of ${data.length} bytes for file ${id}; chunks are limited to ${this.limits.chunkMaxBytes} bytes`,
      );
    }
    p.size += data.length;
    if (p.size > this.limits.fileMaxBytes) {
      this.pending.delete(id);
      throw this.tooLarge(id, `more than ${mib(this.limits.fileMaxBytes)} received`);
    }
    if (data.length > 0) p.chunks.push(data);
    p.next += 1;
    if (!end) return undefined;
    this.pending.delete(id);
    return { id, data: Buffer.concat(p.chunks, p.size), meta: msg.meta, declaredLength: p.declaredLength };
  }

  /** Files still waiting for their end chunk. */
  unfinished(): { id: string; chunks: number; bytes: number }[] {
    return [...this.pending].map(([id, pending]) => ({ id, chunks: pending.next, bytes: pending.size }));
  }

  /** The stream is over: a file without its end chunk is an error, not a silent loss. */
  finish(): void {
    const open = this.unfinished();
    this.pending.clear();
    const first = open[0];
    if (!first) return;
    const more = open.length > 1 ? ` (and ${open.length - 1} more)` : '';
    throw new ToolFailedError(
      `tool invoke error: the tool's output ended before file ${first.id} was complete (${first.chunks} chunks, ${first.bytes} bytes received, no end chunk)${more}`,
    );
  }

  private tooLarge(id: string, what: string): PayloadTooLargeError {
    return new PayloadTooLargeError(
      `tool invoke error: the tool sent a file larger than the ${mib(this.limits.fileMaxBytes)} limit (file ${id}: ${what}); it was refused`,
    );
  }
}
