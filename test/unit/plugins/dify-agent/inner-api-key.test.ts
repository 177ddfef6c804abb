/**
 * The inner API's key: compared so that neither its value nor its length shows in the time a
 * refusal takes, and refused at start when short enough to guess.
 */
import { timingSafeEqual } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../../src/errors.js';
import { InnerApiServer } from '../../../../src/plugins/dify-agent/inner-api-server.js';
import { readDifyAgentSettings } from '../../../../src/plugins/dify-agent/settings.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { captureLogger } from '../../../support/harness.js';

// Watched, not replaced: which buffers the server compares is what tells a length leak.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const KEY = 'inner-key-0123456789abcdef';

describe('the inner API key', () => {
  let server: InnerApiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    vi.mocked(timingSafeEqual).mockClear();
  });

  it('compares a key of any length in full, as fixed-size digests: a wrong length is not refused sooner', async () => {
    server = new InnerApiServer({ host: '127.0.0.1', port: 0, key: KEY, log: captureLogger().log });
    const { port } = await server.start();
    const post = (key: string) =>
      fetch(`http://127.0.0.1:${port}/inner/api/invoke/llm`, {
        method: 'POST',
        headers: { 'X-Inner-Api-Key': key, 'content-type': 'application/json' },
        body: '{}',
      });
    for (const wrong of ['x', `${KEY}x`, KEY.replace(/.$/, '!'), '']) {
      vi.mocked(timingSafeEqual).mockClear();
      expect((await post(wrong)).status, wrong).toBe(401);
      const compared = vi.mocked(timingSafeEqual).mock.calls.map(([a, b]) => [a.byteLength, b.byteLength]);
      expect(compared, wrong).toEqual([[32, 32]]);
    }
    expect((await post(KEY)).status).toBe(200);
  });

  it('refuses to start the inner API with a key shorter than 16 characters', () => {
    const start = () => new InnerApiServer({ host: '127.0.0.1', port: 0, key: 'short-key', log: captureLogger().log });
    expect(start).toThrow(ConfigError);
    expect(start).toThrow(/DIFY_INNER_API_KEY: must be at least 16 characters/);
  });

  it('names a short DIFY_INNER_API_KEY among the settings problems, so validation says so', () => {
    const env = {
      DIFY_AGENT_DAEMON_URL: 'http://127.0.0.1:5002',
      DIFY_AGENT_DAEMON_KEY: 'k',
      DIFY_AGENT_TENANT_ID: 't',
      DIFY_INNER_API_KEY: 'env:INNER',
      DIFY_AGENT_MODEL_URL: 'http://127.0.0.1:11434/v1',
    };
    expect(readDifyAgentSettings(env, loadSecrets({ INNER: 'fifteen-chars!!' })).problems).toEqual([
      expect.stringMatching(/^setting DIFY_INNER_API_KEY: must be at least 16 characters/),
    ]);
    expect(readDifyAgentSettings(env, loadSecrets({ INNER: 'sixteen-chars!!!' })).problems).toEqual([]);
  });
});
