import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  ErrorCode,
  InvalidArgumentsError,
  RateLimitedError,
  TimeoutError,
  ToolFailedError,
  UnauthorizedError,
  UnavailableError,
  UnknownToolError,
} from '../../../../src/errors.js';
import { httpError, startFakeDifyDaemon, type FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { daemonErrorEnvelope, pluginErrorEnvelope, text } from '../../../fakes/dify-wire.js';
import { DAEMON_KEY_TEXT } from '../../../../src/plugins/dify-common/agent-error.js';
import type { PluginFaultBoard } from '../../../../src/plugins/plugin-faults.js';
import { daemonHarness } from './setup.js';

const CREDS = 'Please check your tool provider credentials';
const NOT_FOUND = 'there is not a tool named web-search';

describe('dify-daemon: errors reach the agent as Dify words them', () => {
  let daemon: FakeDifyDaemon;
  beforeEach(async () => {
    daemon = await startFakeDifyDaemon({ plugins: ['langgenius/search'] });
  });
  afterEach(async () => {
    await daemon.close();
  });

  const pluginErrors: [string, string, string, new (...a: never[]) => Error][] = [
    ['ToolProviderCredentialValidationError', 'bad key', CREDS, UnauthorizedError],
    ['ToolProviderOAuthError', 'token expired', CREDS, UnauthorizedError],
    ['InvokeAuthorizationError', 'forbidden', CREDS, UnauthorizedError],
    ['CredentialsValidateFailedError', 'invalid', CREDS, UnauthorizedError],
    ['ValueError', 'Provider `search` not found', NOT_FOUND, UnknownToolError],
    ['ValueError', 'Tool `web_search` not found for provider `search`', NOT_FOUND, UnknownToolError],
    ['ToolNotFoundError', 'gone', NOT_FOUND, UnknownToolError],
    [
      'ValidationError',
      '1 validation error for SearchParams',
      'tool parameters validation error: 1 validation error for SearchParams, please check your tool parameters',
      InvalidArgumentsError,
    ],
    ['InvokeBadRequestError', 'bad query', 'tool parameters validation error: bad query, please check your tool parameters', InvalidArgumentsError],
    ['ValueError', 'query too long', 'tool invoke error: query too long', ToolFailedError],
    ['NotImplementedError', 'not yet', 'tool invoke error: not yet', ToolFailedError],
    ['InvokeConnectionError', 'upstream down', 'tool invoke error: upstream down', ToolFailedError],
    ['InvokeServerUnavailableError', 'upstream 503', 'tool invoke error: upstream 503', ToolFailedError],
    ['unmarshal_error', 'cannot unmarshal', 'tool invoke error: cannot unmarshal', ToolFailedError],
    ['invoke_dify_error', 'backwards call failed', 'tool invoke error: backwards call failed', ToolFailedError],
  ];

  it.each(pluginErrors)('a plugin %s (%s) reads %j', async (type, message, expected, cls) => {
    daemon.script('web_search', async (c) => c.event(pluginErrorEnvelope(type, message, 'Traceback (most recent call last):\n  File "x.py"')));
    const h = await daemonHarness(daemon);
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(cls);
    expect((err as Error).message).toBe(expected);
  });

  it('reads a tool the plugin does not have as "there is not a tool"', async () => {
    const h = await daemonHarness(daemon, {
      tools: [{ name: 'web-search', 'plugin-options': { provider: 'langgenius/search/search', tool: 'no_such_tool' } }],
    });
    await expect(h.call('web-search')).rejects.toThrow(new UnknownToolError(NOT_FOUND));
  });

  it('reports a daemon timeout as a TimeoutError', async () => {
    daemon.script('web_search', async (c) => {
      await c.message(text('partial '));
      await c.event(daemonErrorEnvelope(-500, 'PluginDaemonInternalServerError', 'killed by timeout'));
    });
    const h = await daemonHarness(daemon);
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toBe('tool invoke error: killed by timeout');
  });

  it("reads a rejected daemon key (HTTP 401) as the worker's misconfiguration, not the tool's credentials, and logs it loudly", async () => {
    const h = await daemonHarness(daemon, { settings: { DIFY_DAEMON_KEY: 'not-the-key' } });
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).retriable).toBe(false);
    expect((err as Error).message).toBe(DAEMON_KEY_TEXT);
    expect((err as Error).message).not.toContain(CREDS);
    expect(h.logs.text()).toContain('the plugin daemon rejected the worker key');
    // Readiness shows it until a call of the service succeeds.
    const board = h.ctx.faults as PluginFaultBoard;
    expect(board.list()).toEqual([{ service: 'dify', problem: DAEMON_KEY_TEXT, since: expect.any(String) }]);
  });

  it('clears a reported fault once a call of the service succeeds', async () => {
    daemon.script('web_search', async (c) => c.message(text('ok')));
    const h = await daemonHarness(daemon);
    const board = h.ctx.faults as PluginFaultBoard;
    board.set('dify', 'stale');
    expect(await h.call('web-search', { query: 'q' })).toBe('ok');
    expect(board.list()).toEqual([]);
  });

  it('reads a plugin that is not installed (HTTP 404) as "there is not a tool"', async () => {
    const h = await daemonHarness(daemon, { tools: [{ name: 'web-search', 'plugin-options': { provider: 'other/plugin/p', tool: 't' } }] });
    const err = await h.call('web-search').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnknownToolError);
    expect((err as Error).message).toBe(NOT_FOUND);
  });

  it('reads HTTP 400 as a validation error', async () => {
    daemon.script('web_search', async () => httpError.badRequest('plugin_id is required'));
    const h = await daemonHarness(daemon);
    await expect(h.call('web-search', { query: 'q' })).rejects.toThrow(
      new InvalidArgumentsError('tool parameters validation error: plugin_id is required, please check your tool parameters'),
    );
  });

  it('reads HTTP 500 as a tool invoke error', async () => {
    daemon.script('web_search', async () => httpError.internal());
    const h = await daemonHarness(daemon);
    await expect(h.call('web-search', { query: 'q' })).rejects.toThrow(new ToolFailedError('tool invoke error: failed to get plugin runtime'));
  });

  it('accepts the flat {error_type, message} body as well as the envelope', async () => {
    daemon.script('web_search', async () => httpError.flat(500, 'ToolProviderCredentialValidationError', 'nope'));
    const h = await daemonHarness(daemon);
    await expect(h.call('web-search', { query: 'q' })).rejects.toThrow(new UnauthorizedError(CREDS));
  });

  it('reads the router answer of an unknown route (a string code) as a tool invoke error, and says why in the log', async () => {
    const h = await daemonHarness(daemon, { settings: { DIFY_DAEMON_URL: `${daemon.url}/v2` } });
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolFailedError);
    expect((err as Error).message).toBe('tool invoke error: route not found');
    expect(h.logs.text()).toContain('does not know the route');
  });

  it('reports an unreachable daemon as unavailable (retriable) after its retries', async () => {
    const closed = await startFakeDifyDaemon();
    const url = closed.url;
    await closed.close();
    const h = await daemonHarness(daemon, { settings: { DIFY_DAEMON_URL: url, DIFY_DAEMON_MAX_ATTEMPTS: '2' } });
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as UnavailableError).retriable).toBe(true);
    expect((err as Error).message).toBe('tool invoke error: the plugin daemon cannot be reached (ECONNREFUSED)');
    expect(h.logs.lines.filter((l) => l.includes('retriable failure; trying again'))).toHaveLength(1);
    expect(h.events).toEqual(['retry']);
  });

  it('fails on an event that is not JSON', async () => {
    daemon.script('web_search', async (c) => c.raw('data: {not json\n\n'));
    const h = await daemonHarness(daemon);
    await expect(h.call('web-search', { query: 'q' })).rejects.toThrow('the plugin daemon sent an event that is not JSON');
  });

  it('fails on a malformed invoke message instead of skipping it', async () => {
    daemon.script('web_search', async (c) => c.event('{"code":0,"data":{"message":{"txt":"x"},"meta":null,"type":"text"},"message":"success"}'));
    const h = await daemonHarness(daemon);
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolFailedError);
    expect((err as ToolFailedError).code).toBe(ErrorCode.ToolFailed);
    expect((err as Error).message).toMatch(/^tool invoke error: the tool sent a message that cannot be read \(a text message is malformed at message.text/);
  });

  it('answers rate limits with RateLimitedError once retries run out', async () => {
    daemon.script('web_search', async (c) => c.event(pluginErrorEnvelope('InvokeRateLimitError', 'slow down', 'tb')));
    const h = await daemonHarness(daemon, { settings: { DIFY_DAEMON_MAX_ATTEMPTS: '3' } });
    const err = await h.call('web-search', { query: 'q' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retriable).toBe(true);
    expect((err as Error).message).toBe('tool invoke error: slow down');
    expect(daemon.requests).toHaveLength(3);
  });
});
