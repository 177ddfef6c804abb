/**
 * `toolwire mcp serve --http` against the official MCP conformance suite
 * (`@modelcontextprotocol/conformance`, its own CLI), on the real broker with a worker
 * serving a tool. The scenarios that need the suite's reference tools are left out; these
 * hold for any server.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { collect } from '../interop/python-fixtures.js';
import { startProbeFleet, type ProbeFleet } from '../support/probe-fleet.js';

const CLI = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url));
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'server-sse-multiple-streams', 'dns-rebinding-protection'];

let fleet: ProbeFleet;
let out: string;
beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'toolwire-conformance-'));
  fleet = await startProbeFleet(inject('pulsarAdminUrl'));
}, 120_000);
afterAll(async () => {
  await fleet?.close();
  if (out) await rm(out, { recursive: true, force: true });
});

describe('mcp serve --http and the MCP conformance suite', () => {
  it.each(SCENARIOS)(
    'passes %s',
    async (scenario) => {
      // Its results go to a directory of ours, not the working tree.
      const child = spawn(process.execPath, [CLI, 'server', '--url', fleet.mcp, '--scenario', scenario, '-o', out], {
        cwd: out,
        env: { PATH: process.env['PATH'], HOME: process.env['HOME'], NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const r = await collect(child, 60_000, `conformance ${scenario}`);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    },
    90_000,
  );
});
