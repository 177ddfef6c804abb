import { randomUUID } from 'node:crypto';
import { mkdir, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { ConfigError } from '../errors.js';

export interface BlobInfo {
  readonly mimeType: string;
  readonly filename: string | undefined;
}

/** Where files a tool creates go. Returns where the file went, in words an agent can repeat. */
export interface BlobSink {
  store(data: Buffer, info: BlobInfo, signal: AbortSignal): Promise<string>;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/svg+xml': '.svg',
  'application/pdf': '.pdf',
  'application/json': '.json',
  'application/zip': '.zip',
  'text/plain': '.txt',
  'text/csv': '.csv',
  'text/html': '.html',
  'text/markdown': '.md',
  'audio/mpeg': '.mp3',
  'audio/wav': '.wav',
  'video/mp4': '.mp4',
};

function extensionFor(info: BlobInfo): string {
  const fromName = info.filename ? extname(info.filename) : '';
  // Only a plain extension: the name comes from the plugin and must not steer the path.
  if (/^\.[A-Za-z0-9]{1,10}$/.test(fromName)) return fromName;
  // The type comes from a tool: `constructor` must not find Object's.
  return Object.hasOwn(EXTENSIONS, info.mimeType) ? EXTENSIONS[info.mimeType]! : '.bin';
}

/** How long a stored file is kept by default: a day. */
export const DEFAULT_BLOB_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Sweeps run at most this often, after a store. */
const SWEEP_INTERVAL_MS = 10 * 60 * 1000;
/** The names this sink gives: only those are ever deleted (the directory may hold the operator's own files). */
const OWN_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9]{1,10}$/;

/**
 * Writes each file under a directory of the worker's choosing, with a fresh name, and deletes
 * the files it wrote once they are older than the retention (0: keep them).
 */
export class DirectoryBlobSink implements BlobSink {
  private lastSweep = 0;

  constructor(
    private readonly dir: string,
    private readonly retentionMs = DEFAULT_BLOB_RETENTION_MS,
    private readonly now: () => number = Date.now,
  ) {}

  async store(data: Buffer, info: BlobInfo, signal: AbortSignal): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `${randomUUID()}${extensionFor(info)}`);
    await writeFile(path, data, { signal });
    const t = this.now();
    if (this.retentionMs > 0 && t - this.lastSweep >= SWEEP_INTERVAL_MS) {
      this.lastSweep = t;
      // In the background: a slow directory must not hold the tool's answer.
      void this.sweep().catch(() => undefined);
    }
    return `saved to ${path}`;
  }

  /** Delete this sink's files older than the retention; returns how many went. */
  async sweep(): Promise<number> {
    if (this.retentionMs <= 0) return 0;
    const cutoff = this.now() - this.retentionMs;
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      if (!OWN_NAME.test(name)) continue;
      const path = join(this.dir, name);
      const s = await stat(path).catch(() => undefined);
      if (
        s?.isFile() &&
        s.mtimeMs < cutoff &&
        (await unlink(path).then(
          () => true,
          () => false,
        ))
      )
        removed++;
    }
    return removed;
  }
}

/**
 * The file store of a plugin: a directory (kept for TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS,
 * default 24; 0 keeps files for good) or, with no directory, none.
 */
export function blobSinkFor(dir: string | undefined, settings: Readonly<Record<string, string | undefined>>): BlobSink {
  if (!dir) return new DiscardingBlobSink();
  const hours = settings['TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS'];
  if (hours === undefined) return new DirectoryBlobSink(dir);
  if (!/^\d+(\.\d+)?$/.test(hours)) throw new ConfigError([`TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS must be a number of hours, got ${JSON.stringify(hours)}`]);
  return new DirectoryBlobSink(dir, Number(hours) * 60 * 60 * 1000);
}

/** No file store configured: the file is described, not kept. */
export class DiscardingBlobSink implements BlobSink {
  async store(): Promise<string> {
    return 'not kept (this worker has no file store configured)';
  }
}
