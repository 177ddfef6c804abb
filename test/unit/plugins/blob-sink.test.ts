import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { blobSinkFor, DirectoryBlobSink, DiscardingBlobSink } from '../../../src/plugins/blob-sink.js';

describe('DirectoryBlobSink retention', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tw-blobs-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it("deletes the files it wrote once older than the retention, and never the operator's own", async () => {
    const sink = new DirectoryBlobSink(dir, 60 * 60 * 1000);
    const where = await sink.store(Buffer.from('old'), { mimeType: 'text/plain', filename: undefined }, new AbortController().signal);
    const oldName = where.replace(/^saved to /, '');
    await sink.store(Buffer.from('new'), { mimeType: 'text/plain', filename: undefined }, new AbortController().signal);
    await writeFile(join(dir, 'operator-notes.txt'), 'mine');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(oldName, twoHoursAgo, twoHoursAgo);
    await utimes(join(dir, 'operator-notes.txt'), twoHoursAgo, twoHoursAgo);
    expect(await sink.sweep()).toBe(1);
    const left = await readdir(dir);
    expect(left).toHaveLength(2);
    expect(left).toContain('operator-notes.txt');
    expect(left).not.toContain(oldName.split('/').pop());
  });

  it('keeps everything with a retention of 0, and reads the setting in hours', async () => {
    expect(await new DirectoryBlobSink(dir, 0).sweep()).toBe(0);
    expect(blobSinkFor(undefined, {})).toBeInstanceOf(DiscardingBlobSink);
    expect(blobSinkFor(dir, { TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS: '0.5' })).toBeInstanceOf(DirectoryBlobSink);
    expect(() => blobSinkFor(dir, { TOOLWIRE_PLUGIN_BLOB_RETENTION_HOURS: 'a day' })).toThrow(ConfigError);
  });
});
