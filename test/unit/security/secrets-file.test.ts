/**
 * The secrets file is the operator's JSON: read once at start, keys to strings. A file of the
 * wrong shape is refused naming the key, and no error quotes the file's text (its secrets).
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors.js';
import { loadSecrets } from '../../../src/secrets.js';

const SECRET = 'sk-live-4b9e1f0c2d';

describe('the secrets file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolwire-secrets-'));
    await chmod(dir, 0o700);
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  const file = async (text: string): Promise<string> => {
    const path = join(dir, 'secrets.json');
    await writeFile(path, text, { mode: 0o600 });
    return path;
  };
  const refusal = (path: string): ConfigError => {
    try {
      loadSecrets({}, path);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).not.toContain(SECRET);
      return err as ConfigError;
    }
    throw new Error('the file was read');
  };

  it('resolves file:<key> from a JSON object of strings', async () => {
    const secrets = loadSecrets({}, await file(JSON.stringify({ serpapi: SECRET })));
    expect(secrets.resolveOwn('file:serpapi')).toBe(SECRET);
    expect(secrets.values()).toContain(SECRET);
  });

  it('refuses a value that is not a string, naming its key', async () => {
    const path = await file(JSON.stringify({ serpapi: SECRET, port: 8080 }));
    expect(refusal(path).problems).toEqual([`TOOLWIRE_SECRETS_FILE ${path}: at port: Invalid input: expected string, received number`]);
  });

  it('refuses a file that is not an object, or not JSON, without quoting it', async () => {
    const list = await file(JSON.stringify([SECRET]));
    expect(refusal(list).problems).toEqual([`TOOLWIRE_SECRETS_FILE ${list}: at (root): must be a JSON object of keys to strings`]);
    // JSON.parse's own message would quote the text: `Unexpected token 's', "sk-live-..." is not valid JSON`.
    const bare = await file(SECRET);
    expect(refusal(bare).problems).toEqual([`TOOLWIRE_SECRETS_FILE ${bare}: is not JSON`]);
  });
});
