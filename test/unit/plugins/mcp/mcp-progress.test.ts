/**
 * A streamed MCP call's progress, when the server's progress and result reach the worker in
 * one read (a loaded machine does it now and then; this server always does).
 */
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { McpSession } from '../../../../src/plugins/mcp/mcp-session.js';
import { loadSecrets } from '../../../../src/secrets.js';

describe('McpSession progress', () => {
  const session = new McpSession(
    { transport: 'stdio', command: process.execPath, args: ['test/support/mcp-one-write-server.mjs'], env: {}, cwd: process.cwd() },
    { serviceId: 'one-write', configDir: process.cwd(), secrets: loadSecrets({}), basics: { PATH: process.env['PATH'] }, log: pino({ level: 'silent' }) },
  );
  afterAll(() => session.close());

  it('hands over every progress notification read in the same chunk as the result, in order', async () => {
    const seen: string[] = [];
    const r = await session.call('steps', {}, { signal: AbortSignal.timeout(20_000), timeoutMs: 20_000, onProgress: (p) => seen.push(p.message ?? '') });
    expect(r.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(seen).toEqual(['step 1', 'step 2', 'step 3']);
  });
});
