import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { FileTokenSource } from '../../../src/transport/file-token-source.js';

describe('FileTokenSource', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-token-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives what the file holds now: rewritten in place, or swapped in by a rename as Kubernetes does', async () => {
    const path = join(dir, 'token');
    await writeFile(path, 'first\n');
    const source = new FileTokenSource(path);
    expect(await source.token()).toBe('first');
    await writeFile(path, 'second-and-longer');
    expect(await source.token()).toBe('second-and-longer');
    // Same size, new file under the same name.
    await writeFile(join(dir, 'next'), 'third-and-longer!');
    await rename(join(dir, 'next'), path);
    expect(await source.token()).toBe('third-and-longer!');
  });

  it('refuses a missing or empty file, naming the path and the setting, never a token', async () => {
    const path = join(dir, 'token');
    const source = new FileTokenSource(path);
    await expect(source.token()).rejects.toThrow(ConfigError);
    await expect(source.token()).rejects.toThrow(/PULSAR_TOKEN_FILE: cannot read .*token/);
    await writeFile(path, '  \n');
    await expect(source.token()).rejects.toThrow(/PULSAR_TOKEN_FILE: .* is empty/);
    expect(source.description).toContain(path);
  });
});
