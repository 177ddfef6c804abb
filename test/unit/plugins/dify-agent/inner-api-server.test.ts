import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { InnerApiServer, type AgentCallScope } from '../../../../src/plugins/dify-agent/inner-api-server.js';
import { captureLogger } from '../../../support/harness.js';

/** The daemon's reader (pkg/utils/parser/chunking.go): 0x0f, reserved, header length 10, data length, 6 reserved, data. */
function readFrames(buf: Buffer): unknown[] {
  const out: unknown[] = [];
  let off = 0;
  while (off < buf.length) {
    expect(buf[off]).toBe(0x0f);
    expect(buf.readUInt16LE(off + 2)).toBe(10);
    const len = buf.readUInt32LE(off + 4);
    out.push(JSON.parse(buf.subarray(off + 14, off + 14 + len).toString('utf8')));
    off += 14 + len;
  }
  return out;
}

describe('the inner API a strategy plugin daemon calls back', () => {
  const KEY = 'inner-key-0123456789';
  let server: InnerApiServer | undefined;
  afterEach(async () => server?.close());

  async function start(scope?: AgentCallScope): Promise<string> {
    server = new InnerApiServer({ host: '127.0.0.1', port: 0, key: KEY, log: captureLogger().log });
    const { port } = await server.start();
    if (scope) server.register(scope);
    return `http://127.0.0.1:${port}/inner/api`;
  }
  const post = (url: string, body: unknown, key = KEY) =>
    fetch(url, { method: 'POST', headers: { 'X-Inner-Api-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  const scope: AgentCallScope = {
    token: 'call-1',
    async *llm(body) {
      yield { model: 'm', delta: { index: 0, message: { role: 'assistant', content: `echo ${String(body['model'])}` } } };
    },
    async *tool() {
      yield { type: 'text', message: { text: 'half' }, meta: null };
      throw new Error('the tool worker went away');
    },
  };

  it('answers a model call of a registered agent call in length-prefixed {data, error} frames', async () => {
    const base = await start(scope);
    const res = await post(`${base}/invoke/llm`, { user_id: 'call-1', model: 'x' });
    expect(res.status).toBe(200);
    expect(readFrames(Buffer.from(await res.arrayBuffer()))).toEqual([
      { data: { model: 'm', delta: { index: 0, message: { role: 'assistant', content: 'echo x' } } }, error: '' },
    ]);
  });

  it('ends a failing stream with an error frame', async () => {
    const base = await start(scope);
    const frames = readFrames(Buffer.from(await (await post(`${base}/invoke/tool`, { user_id: 'call-1', tool: 't' })).arrayBuffer()));
    expect(frames).toEqual([
      { data: { type: 'text', message: { text: 'half' }, meta: null }, error: '' },
      { data: null, error: 'the tool worker went away' },
    ]);
  });

  it('refuses a call without the daemon key, and one for no running agent call', async () => {
    const base = await start(scope);
    expect((await post(`${base}/invoke/llm`, { user_id: 'call-1' }, 'wrong')).status).toBe(401);
    const frames = readFrames(Buffer.from(await (await post(`${base}/invoke/llm`, { user_id: 'call-2' })).arrayBuffer()));
    expect(frames).toEqual([{ data: null, error: 'no running agent call has this user_id (it ended, or was cancelled)' }]);
  });

  it('ends an invocation without a string user_id with an error frame naming the field, and reaches no call', async () => {
    const reached: unknown[] = [];
    const base = await start({
      ...scope,
      llm: async function* (body) {
        reached.push(body);
        yield {};
      },
    });
    const frames = readFrames(Buffer.from(await (await post(`${base}/invoke/llm`, { user_id: 42, model: 'x' })).arrayBuffer()));
    expect(frames).toEqual([{ data: null, error: expect.stringMatching(/^the invocation is malformed at user_id: /) }]);
    expect(reached).toEqual([]);
  });

  it('answers what it does not serve with a clear error, in the framing the daemon reads for that route', async () => {
    const base = await start(scope);
    const app = readFrames(Buffer.from(await (await post(`${base}/invoke/app`, { user_id: 'call-1' })).arrayBuffer()));
    expect(app).toEqual([{ data: null, error: expect.stringContaining('toolwire does not serve Dify apps') }]);
    const enc = await post(`${base}/invoke/encrypt`, { user_id: 'call-1' });
    expect(await enc.json()).toEqual({ data: null, error: expect.stringContaining('toolwire does not serve credential encryption') });
    const sum = await post(`${base}/invoke/summary`, { user_id: 'call-1' });
    expect(await sum.json()).toEqual({ data: null, error: expect.stringContaining('summaries') });
  });

  it('logs a server error after it listens (EMFILE on accept) and keeps serving', async () => {
    const { log, lines } = captureLogger();
    server = new InnerApiServer({ host: '127.0.0.1', port: 0, key: KEY, log });
    const { port } = await server.start();
    const http = (server as unknown as { server: Server }).server;
    http.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' }));
    expect(lines().some((l) => l.includes('dify inner API server error'))).toBe(true);
    const res = await post(`http://127.0.0.1:${port}/inner/api/invoke/encrypt`, { user_id: 'x' });
    expect(res.status).toBe(200);
  });
});
