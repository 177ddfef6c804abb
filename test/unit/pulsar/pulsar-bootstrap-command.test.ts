import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { pulsarBootstrapCommand, pulsarCommand } from '../../../src/cli/commands/pulsar-bootstrap.js';
import type { CommandIo } from '../../../src/cli/command.js';
import { fakeAdminServerPerTest } from '../../fakes/fake-admin-server.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  const io: CommandIo = { argv, stdin: new PassThrough(), stdout, stderr, env, signal: new AbortController().signal };
  const code = await pulsarBootstrapCommand.run(io);
  return { code, stdout: out, stderr: err };
}

describe('toolwire pulsar bootstrap', () => {
  const server = fakeAdminServerPerTest();

  it('prints its help with --help and exits 0', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: toolwire pulsar bootstrap');
    expect(r.stdout).toContain('--admin-url URL');
    expect(server().seen).toHaveLength(0);
  });

  it('creates the tenant and namespaces and says what it did', async () => {
    const r = await run(['--admin-url', server().url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('tenant tg: created');
    expect(r.stdout).toContain('namespace tg/response: created, short retention set');
    expect(server().namespaces.size).toBe(4);
  });

  it('takes the admin URL and the token from the environment', async () => {
    const r = await run(['--json'], { PULSAR_ADMIN_URL: server().url, PULSAR_ADMIN_TOKEN: 'tok-from-env' });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { tenant: string; namespaces: unknown[] };
    expect(report.tenant).toBe('tg');
    expect(report.namespaces).toHaveLength(4);
    expect(server().seen[0]?.authorization).toBe('Bearer tok-from-env');
  });

  it('exits 1 with the reason when the server() refuses', async () => {
    server().override = (_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"reason":"Authentication required"}');
      return true;
    };
    const r = await run(['--admin-url', server().url, '--token', 'bad-token']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 401: Authentication required/);
    expect(r.stderr).not.toContain('bad-token');
  });

  it('exits 2 on an unknown option or a bad number', async () => {
    expect((await run(['--bogus'])).code).toBe(2);
    const r = await run(['--admin-url', server().url, '--wait', 'soon']);
    expect(r.code).toBe(2);
    expect(server().seen).toHaveLength(0);
  });
});

describe('toolwire pulsar', () => {
  async function runPulsar(argv: string[]): Promise<Run> {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await pulsarCommand.run({ argv, stdin: new PassThrough(), stdout, stderr, env: {}, signal: new AbortController().signal });
    return { code, stdout: out, stderr: err };
  }

  it('dispatches "bootstrap" to the bootstrap command', async () => {
    const r = await runPulsar(['bootstrap', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: toolwire pulsar bootstrap');
  });

  it('lists its commands, and refuses an unknown one with exit 2', async () => {
    expect((await runPulsar(['--help'])).stdout).toMatch(/bootstrap\s+Create TrustGraph's tenant/);
    const r = await runPulsar(['teardown']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "teardown"');
  });
});
