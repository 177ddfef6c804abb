/**
 * Names that come from descriptors or from a tool's output are looked up as own keys only:
 * `constructor`, `toString` and friends must not find what every plain object inherits.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirectoryBlobSink } from '../../../src/plugins/blob-sink.js';
import { loadSecrets } from '../../../src/secrets.js';
import { catalogOf, entry } from '../../support/harness.js';
import { serviceDescriptor as service } from '../../support/descriptors.js';

describe('lookups by a name from outside', () => {
  it('resolves no secret named after an inherited property, from the environment or the file', () => {
    const secrets = loadSecrets({ REAL: 'x' });
    for (const ref of ['env:constructor', 'env:toString', 'env:__proto__', 'file:constructor', 'file:hasOwnProperty'])
      expect(secrets.resolve(ref), ref).toBeUndefined();
    expect(secrets.resolve('env:REAL')).toBe('x');
    expect(loadSecrets(process.env).resolve('env:constructor')).toBeUndefined();
  });

  it('names a file of a type called "constructor" .bin', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolwire-blobs-'));
    try {
      await new DirectoryBlobSink(dir).store(Buffer.from('x'), { mimeType: 'constructor', filename: undefined }, new AbortController().signal);
      expect((await readdir(dir))[0]).toMatch(/^[0-9a-f-]{36}\.bin$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('knows no builtin module called "constructor"', async () => {
    const err = await catalogOf([entry('tool-service', 's', service('s', { plugin: { kind: 'module', module: 'builtin:constructor' } }))]).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/unknown builtin module "constructor"/);
  });
});
