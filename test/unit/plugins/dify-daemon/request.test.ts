import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeDifyDaemon, type FakeDifyDaemon } from '../../../fakes/fake-dify-daemon.js';
import { text } from '../../../fakes/dify-wire.js';
import { deferred } from '../dify-common/harness.js';
import { CREDENTIAL, daemonHarness, webSearch } from './setup.js';

describe('dify-daemon: the request', () => {
  let daemon: FakeDifyDaemon;
  beforeEach(async () => {
    daemon = await startFakeDifyDaemon({ plugins: ['langgenius/search'] });
  });
  afterEach(async () => {
    await daemon.close();
  });

  it('posts to the dispatch route with exactly the documented headers and body, the request id as message_id', async () => {
    daemon.script('web_search', async (c) => c.message(text('ok')));
    const h = await daemonHarness(daemon);
    expect(await h.call('web-search', { query: 'cats' }, { user: 'user-7', requestId: 'req-41' })).toBe('ok');

    const req = daemon.requests[0];
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe(`/plugin/${daemon.tenant}/dispatch/tool/invoke`);
    expect(req?.headers['x-api-key']).toBe(daemon.key);
    expect(req?.headers['x-plugin-id']).toBe('langgenius/search');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.body).toBe(
      `{"user_id":"user-7","conversation_id":null,"app_id":null,"message_id":"req-41","data":{"provider":"search","tool":"web_search","credentials":{"api_key":"${CREDENTIAL}"},"credential_type":"api-key","tool_parameters":{"region":"eu","query":"cats","limit":3}}}`,
    );
  });

  it("sends a fixed user_id when DIFY_USER_ID_SOURCE is fixed, whatever the request's user", async () => {
    daemon.script('web_search', async (c) => c.message(text('ok')));
    const h = await daemonHarness(daemon, { settings: { DIFY_USER_ID_SOURCE: 'fixed', DIFY_USER_ID: 'fleet-7' } });
    expect(await h.call('web-search', { query: 'cats' }, { user: 'alice@example.com' })).toBe('ok');
    expect((JSON.parse(daemon.requests[0]?.body ?? '{}') as { user_id: string }).user_id).toBe('fleet-7');
  });

  it('sends empty credentials and tool_parameters rather than leaving them out', async () => {
    daemon.script('now', async (c) => c.message(text('12:00')));
    const h = await daemonHarness(daemon, {
      tools: [{ name: 'clock', 'plugin-options': { plugin_id: 'langgenius/search', provider: 'time', tool: 'now' } }],
    });
    await h.call('clock');
    const body = JSON.parse(daemon.requests[0]?.body ?? '{}') as { data: Record<string, unknown>; user_id: string };
    expect(body.data['credentials']).toEqual({});
    expect(body.data['tool_parameters']).toEqual({});
    expect(body.data['credential_type']).toBe('unauthorized');
    expect(body.user_id).toBe('toolwire');
  });

  it('takes plugin, provider and credentials from the service and the tool name from the descriptor', async () => {
    daemon.script('lookup', async (c) => c.message(text('found')));
    const h = await daemonHarness(daemon, {
      servicePlugin: { provider: 'langgenius/search/search', credentials: { api_key: 'env:SEARCH_KEY' }, credential_type: 'api-key' },
      tools: [{ name: 'lookup' }],
    });
    expect(await h.call('lookup')).toBe('found');
    const body = JSON.parse(daemon.requests[0]?.body ?? '{}') as { data: Record<string, unknown> };
    expect(daemon.requests[0]?.headers['x-plugin-id']).toBe('langgenius/search');
    expect(body.data).toMatchObject({ provider: 'search', tool: 'lookup', credentials: { api_key: CREDENTIAL } });
  });

  it('turns declared file parameters into the file objects plugins read', async () => {
    daemon.script('read_doc', async (c) => c.message(text('read')));
    const h = await daemonHarness(daemon, {
      tools: [
        {
          name: 'read-doc',
          arguments: [{ name: 'doc', type: 'file', form: 'form', required: true }],
          'runtime-parameters': { doc: 'https://files.example/a/report.pdf' },
          'plugin-options': { provider: 'langgenius/search/search', tool: 'read_doc' },
        },
      ],
    });
    await h.call('read-doc');
    const body = JSON.parse(daemon.requests[0]?.body ?? '{}') as { data: { tool_parameters: Record<string, unknown> } };
    expect(body.data.tool_parameters['doc']).toEqual({
      dify_model_identity: '__dify__file__',
      type: 'custom',
      url: 'https://files.example/a/report.pdf',
      filename: 'report.pdf',
      extension: '.pdf',
      size: -1,
    });
  });

  it('refuses a file URL that reaches a private or link-local address, and calls nothing', async () => {
    daemon.script('read_doc', async (c) => c.message(text('read')));
    const h = await daemonHarness(daemon, {
      tools: [
        {
          name: 'read-doc',
          arguments: [{ name: 'doc', type: 'file', required: true }],
          'plugin-options': { provider: 'langgenius/search/search', tool: 'read_doc' },
        },
      ],
    });
    const before = daemon.requests.length;
    for (const [url, why] of [
      ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a linkLocal address'],
      ['http://files.internal/a.pdf', 'host files.internal resolves to 10.0.0.7, a private address'],
      ['file:///etc/passwd', 'only http and https URLs are allowed'],
    ] as const) {
      const err = await h.call('read-doc', { doc: url }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'invalid-arguments' });
      expect((err as Error).message).toContain(why);
    }
    expect(daemon.requests.length).toBe(before);
  });

  it('yields observation text while the stream is still open', async () => {
    const firstSeen = deferred();
    daemon.script('web_search', async (c) => {
      await c.message(text('first '));
      // The second part is only sent once the test has seen the first: buffering would deadlock.
      await firstSeen.promise;
      await c.message(text('second'));
    });
    const h = await daemonHarness(daemon);
    const chunks: string[] = [];
    const out = await h.call(
      'web-search',
      { query: 'q' },
      {
        onChunk: (c) => {
          chunks.push(c);
          firstSeen.resolve();
        },
      },
    );
    expect(chunks).toEqual(['first ', 'second']);
    expect(out).toBe('first second');
  });

  it('reads events split anywhere across network writes, with CRLF line ends and comments', async () => {
    daemon.script('web_search', async (c) => {
      const ev = `: keep-alive\r\ndata: {"code":0,"data":{"message":{"text":"h\\u00e9llo \\u003cb\\u003e"},"meta":null,"type":"text"},"message":"success"}\r\n\r\n`;
      for (let i = 0; i < ev.length; i += 7) await c.raw(ev.slice(i, i + 7));
      // A multi-byte character split between two writes.
      const bytes = Buffer.from('data: {"code":0,"data":{"message":{"text":" ☃"},"meta":null,"type":"text"},"message":"success"}\n\n');
      const cut = bytes.indexOf(0xe2) + 1;
      await c.raw(bytes.subarray(0, cut));
      await c.raw(bytes.subarray(cut));
    });
    const h = await daemonHarness(daemon);
    expect(await h.call('web-search', { query: 'q' })).toBe('héllo <b> ☃');
  });

  it('never puts the request arguments of the model into non-llm parameters', async () => {
    daemon.script('web_search', async (c) => c.message(text('ok')));
    const h = await daemonHarness(daemon, { tools: [webSearch] });
    await h.call('web-search', { query: 'q', region: 'us' });
    const body = JSON.parse(daemon.requests[0]?.body ?? '{}') as { data: { tool_parameters: Record<string, unknown> } };
    expect(body.data.tool_parameters['region']).toBe('eu');
  });
});
