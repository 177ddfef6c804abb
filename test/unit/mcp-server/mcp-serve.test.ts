/**
 * `toolwire mcp serve` as a real process, reached with the MCP SDK's own Client over stdio
 * and over streamable HTTP. Embedded transport: the worker runs in the same process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolwire-mcp-serve-'));
  await cp('config', dir, { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const textOf = (r: unknown) => ((r as { content: { type: string; text: string }[] }).content ?? []).map((c) => c.text).join('');

describe('toolwire mcp serve over stdio', () => {
  let client: Client;
  /** Every message the client reads, in the order it reads them. */
  const read: JSONRPCMessage[] = [];
  beforeAll(async () => {
    client = new Client({ name: 'test', version: '1' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['bin/toolwire.js', 'mcp', 'serve', '-d', dir],
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'warn', TOOLWIRE_CONFIG_POLL_MS: '0' },
      stderr: 'pipe',
    });
    // The SDK's client keeps a handler set here and calls it before its own dispatch.
    transport.onmessage = (m) => read.push(m);
    await client.connect(transport);
  }, 30_000);
  afterAll(async () => {
    await client?.close();
  });

  it('lists the catalog with each tool’s model-facing schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['calculate', 'current-time', 'echo', 'tell-dad-joke', 'tell-joke']);
    expect(tools.find((t) => t.name === 'calculate')?.inputSchema).toEqual({
      type: 'object',
      properties: { expression: { type: 'string', description: 'The expression, e.g. (2 + 3) * 4' } },
      required: ['expression'],
    });
  });

  it('calls a tool through the worker, and answers an error as an isError result', async () => {
    expect(textOf(await client.callTool({ name: 'calculate', arguments: { expression: '(2+3)*4' } }))).toBe('20');
    const bad = await client.callTool({ name: 'calculate', arguments: {} });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^invalid-arguments: /);
    const unknown = await client.callTool({ name: 'nope', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toMatch(/^unknown-tool: /);
  });

  it('sends each chunk of a streamed answer as a progress notification, before the result', async () => {
    const from = read.length;
    const r = await client.callTool({ name: 'echo', arguments: { text: 'ab', chunks: 3 } }, undefined, { onprogress: () => undefined });
    expect(textOf(r)).toBe('ababab');
    // Read off the wire, not through onprogress: the SDK client (1.32) drops a progress
    // notification that it reads in the same chunk as the result (typescript-sdk#2580), which
    // a loaded machine does about one run in three. The worker sends a short stream's chunks
    // each in its own message (observation-sink.ts, JOIN_AFTER), so there are exactly three.
    const answered = read.slice(from);
    const result = answered.findIndex((m) => 'result' in m);
    const id = (answered[result] as { id: number }).id;
    const progress = answered.flatMap((m, at) => {
      const p = 'method' in m && m.method === 'notifications/progress' ? (m.params as Record<string, unknown>) : undefined;
      return p?.['progressToken'] === id ? [{ at, progress: p['progress'], message: p['message'] }] : [];
    });
    expect(progress.map((p) => [p.progress, p.message])).toEqual([
      [1, 'ab'],
      [2, 'ab'],
      [3, 'ab'],
    ]);
    expect(progress.every((p) => p.at < result)).toBe(true);
  });

  it('announces tools/list_changed when the config changes, and lists the new tool', async () => {
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    await writeFile(
      join(dir, 'tool', 'shout.json'),
      JSON.stringify({ name: 'shout', service: 'joke-service', style: 'shout', description: 'a loud joke', arguments: [{ name: 'topic', type: 'string' }] }),
    );
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('shout');
  }, 20_000);
});

describe('toolwire mcp serve over streamable HTTP', () => {
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    child = spawn(process.execPath, ['bin/toolwire.js', 'mcp', 'serve', '-d', 'config', '--http', '0'], {
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'info', TOOLWIRE_HTTP_TOKEN: 'env:SERVE_TOKEN', SERVE_TOKEN: 'let-me-in' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    url = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`no serving line:\n${err}`)), 30_000);
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /"url":"(http:\/\/[^"]+\/mcp)"/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
  }, 40_000);
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  it('refuses a client without the bearer token', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toMatchObject({ code: 401 });
    const wrong = new Client({ name: 'test', version: '1' });
    await expect(
      wrong.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer let-me-inn' } } })),
    ).rejects.toMatchObject({ code: 401 });
  });

  it('serves a client with the token: list and call', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: 'Bearer let-me-in' } } }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('tell-joke');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, n) => client.callTool({ name: 'calculate', arguments: { expression: `${n}+1` } })));
    expect(answers.map(textOf)).toEqual(Array.from({ length: 20 }, (_, n) => String(n + 1)));
    await client.close();
  });

  it('will not listen beyond loopback without a token', async () => {
    const c = spawn(process.execPath, ['bin/toolwire.js', 'mcp', 'serve', '-d', 'config', '--http', '0', '--host', '0.0.0.0'], {
      env: { PATH: process.env['PATH'] ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    c.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => c.once('exit', resolve));
    expect(code).toBe(2);
    expect(err).toMatch(/needs a bearer token \(TOOLWIRE_HTTP_TOKEN/);
    // A process's whole start, as the servers above are given: over 10 s on a loaded machine.
  }, 30_000);
});
