import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';

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

/** Writes each file under a directory of the worker's choosing, with a fresh name. */
export class DirectoryBlobSink implements BlobSink {
  constructor(private readonly dir: string) {}

  async store(data: Buffer, info: BlobInfo, signal: AbortSignal): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `${randomUUID()}${extensionFor(info)}`);
    await writeFile(path, data, { signal });
    return `saved to ${path}`;
  }
}

/** No file store configured: the file is described, not kept. */
export class DiscardingBlobSink implements BlobSink {
  async store(): Promise<string> {
    return 'not kept (this worker has no file store configured)';
  }
}
