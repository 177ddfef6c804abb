import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbortedError, InvalidArgumentsError, TimeoutError } from '../../../../src/errors.js';
import { startFakeDifyDaemon, type FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { pluginErrorEnvelope, text } from '../../../fakes/dify-wire.js';
import { deferred } from '../dify-common/harness.js';
import { daemonHarness } from './setup.js';

describe('dify-daemon: retries and aborts', () => {
  let daemon: FakeDifyDaemon;
  beforeEach(async () => {
    daemon = await startFakeDifyDaemon({ plugins: ['langgenius/search'] });
  });
  afterEach(async () => {
    await daemon.close();
  });

  it('retries a rate-limited call and answers with the retry', async () => {
    daemon.script('web_search', async (c) => {
      if (c.attempt === 1) await c.event(pluginErrorEnvelope('InvokeRateLimitError', 'rate limit exceeded', 'tb'));
      else await c.message(text(`answer on try ${c.attempt}`));
    });
    const h = await daemonHarness(daemon);
    expect(await h.call('web-search', { query: 'q' })).toBe('answer on try 2');
    expect(daemon.requests).toHaveLength(2);
    expect(daemon.requests[0]?.body).toBe(daemon.requests[1]?.body);
  });

  it('retries an HTTP 429 and a 503 from something in front of the daemon', async () => {
    daemon.script('web_search', async (c) => {
      if (c.attempt === 1) return { status: 429, body: '{"code":-429,"data":null,"message":"too many requests"}' };
      if (c.attempt === 2) return { status: 503, body: 'upstream unavailable' };
      await c.message(text('ok'));
    });
    const h = await daemonHarness(daemon);
    expect(await h.call('web-search', { query: 'q' })).toBe('ok');
    expect(daemon.requests).toHaveLength(3);
  });

  it('does not retry a validation error', async () => {
    daemon.script('web_search', async (c) => c.event(pluginErrorEnvelope('ValidationError', 'query: field required', 'tb')));
    const h = await daemonHarness(daemon);
    await expect(h.call('web-search', { query: 'q' })).rejects.toThrow(InvalidArgumentsError);
    expect(daemon.requests).toHaveLength(1);
  });

  it('does not retry once text has gone to the agent', async () => {
    daemon.script('web_search', async (c) => {
      await c.message(text('half an answer'));
      await c.event(pluginErrorEnvelope('InvokeRateLimitError', 'rate limit exceeded', 'tb'));
    });
    const h = await daemonHarness(daemon);
    const chunks: string[] = [];
    await expect(h.call('web-search', { query: 'q' }, { onChunk: (c) => chunks.push(c) })).rejects.toThrow('tool invoke error: rate limit exceeded');
    expect(chunks).toEqual(['half an answer']);
    expect(daemon.requests).toHaveLength(1);
  });

  it('stops the HTTP request when the call is aborted', async () => {
    const clientGone = deferred();
    daemon.script('web_search', async (c) => {
      await c.message(text('working...'));
      await c.closed;
      clientGone.resolve();
    });
    const h = await daemonHarness(daemon);
    const ac = new AbortController();
    const err = await h.call('web-search', { query: 'q' }, { signal: ac.signal, onChunk: () => ac.abort() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AbortedError);
    await clientGone.promise;
    expect(daemon.requests[0]?.clientClosedEarly).toBe(true);
  });

  it("raises the worker's own reason when it aborts with one (a timeout)", async () => {
    daemon.script('web_search', async (c) => {
      await c.closed;
    });
    const h = await daemonHarness(daemon);
    const ac = new AbortController();
    const started = deferred();
    const pending = h.call('web-search', { query: 'q' }, { signal: ac.signal }).catch((e: unknown) => e);
    const poll = setInterval(() => daemon.requests.length > 0 && started.resolve(), 5);
    await started.promise;
    clearInterval(poll);
    ac.abort(new TimeoutError('tool web-search timed out after 100 ms'));
    const err = await pending;
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toBe('tool web-search timed out after 100 ms');
  });

  it('stops waiting between retries when the call is aborted', async () => {
    daemon.script('web_search', async (c) => c.event(pluginErrorEnvelope('InvokeRateLimitError', 'slow down', 'tb')));
    // A backoff far longer than the test: only the abort can end the wait.
    const h = await daemonHarness(daemon, { settings: { DIFY_DAEMON_RETRY_BASE_MS: '600000', DIFY_DAEMON_RETRY_MAX_MS: '600000' } });
    const ac = new AbortController();
    const pending = h.call('web-search', { query: 'q' }, { signal: ac.signal }).catch((e: unknown) => e);
    const waiting = deferred();
    const poll = setInterval(() => h.logs.text().includes('retriable failure; trying again') && waiting.resolve(), 5);
    await waiting.promise;
    clearInterval(poll);
    ac.abort();
    expect(await pending).toBeInstanceOf(AbortedError);
    expect(daemon.requests).toHaveLength(1);
  });
});
