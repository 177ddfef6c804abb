import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { StdioChildTransport } from '../../../../src/plugins/mcp/stdio-child-transport.js';

describe('an MCP server over stdio', () => {
  it('rejects a send still waiting for the pipe to drain when the server dies', async () => {
    // A server that never reads its stdin: a large message fills the pipe and waits for drain.
    const transport = new StdioChildTransport({
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      cwd: tmpdir(),
    });
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    transport.onerror = () => undefined;
    await transport.start();
    const child = (transport as unknown as { child: ChildProcess }).child;
    const sent = transport.send({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(4 * 1024 * 1024) } });
    child.kill('SIGKILL');
    await expect(sent).rejects.toThrow(/MCP server/);
    await closed;
  }, 15_000);

  it('says how a server that died before it answered ended, and the stderr line about a file it could not reach', async () => {
    const transport = new StdioChildTransport({
      command: process.execPath,
      args: ['-e', 'console.error("starting"); console.error("Error: EACCES: permission denied, open \'/srv/tools.json\'"); process.exit(3)'],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      cwd: tmpdir(),
    });
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    transport.onerror = () => undefined;
    await transport.start();
    await closed;
    expect(await transport.endedEarly()).toBe(
      "the MCP server exited with code 3 before it answered; its stderr: Error: EACCES: permission denied, open '/srv/tools.json'",
    );
  });

  it('says nothing of a server it stopped itself', async () => {
    const transport = new StdioChildTransport({
      command: process.execPath,
      // Deaf to the end of its stdin: close() ends it with SIGTERM.
      args: ['-e', 'process.stdin.resume(); setInterval(() => {}, 1000)'],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      cwd: tmpdir(),
    });
    transport.onerror = () => undefined;
    await transport.start();
    await transport.close();
    expect(await transport.endedEarly()).toBeUndefined();
  }, 15_000);
});
