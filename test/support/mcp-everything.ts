/**
 * `@modelcontextprotocol/server-everything` (npm, a dev dependency): the MCP project's own
 * reference server, run as a child process over stdio or streamable HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const EVERYTHING = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

/** The plugin object of a service on server-everything over stdio. */
export function everythingStdio(): Record<string, unknown> {
  return { kind: 'mcp', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** server-everything over streamable HTTP on a free port; its URL is `<base>/mcp`. */
export async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { PATH: process.env['PATH'], PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen within 20 s:\n${out}`)), 20_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}:\n${out}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
