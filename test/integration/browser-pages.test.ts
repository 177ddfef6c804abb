/**
 * Web pages against the worker's gateway and `mcp serve --http`, in a real browser (Debian's
 * Chromium, driven by playwright-core). A page of another local origin tries every request a
 * page may send without asking (a text/plain fetch, no-cors, a form, a beacon), and a page
 * under a rebound name (rebind.test, resolved to 127.0.0.1 by the browser) calls as if it
 * were same-origin. The one tool records every call: none of theirs may run, while the same
 * calls from a client that is not a page do.
 */
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startProbeFleet, type ProbeFleet } from '../support/probe-fleet.js';

const REBIND = 'rebind.test';
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
};

let fleet: ProbeFleet;
let browser: BrowserContext;
let profile: string;
let attacker: Server;
let attackerUrl: string;

/** The attacker's page: every trick is a function the test calls. */
function attackPage(gateway: string, mcp: string): string {
  const invoke = `${gateway}/v1/tools/probe/invoke`;
  return `<!doctype html><html><body>
<iframe name="sink"></iframe>
<form id="gwform" method="POST" enctype="text/plain" target="sink" action="${invoke}"><input name='{"arguments":{"via":"gw-form","pad":"' value='"}}'></form>
<form id="mcpform" method="POST" enctype="text/plain" target="sink" action="${mcp}"><input name='${JSON.stringify(INIT).slice(0, -1)},"pad":"' value='"}'></form>
<script>
const body = (via) => JSON.stringify({ arguments: { via } });
const call = (via) => JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'probe', arguments: { via } } });
const settle = (p) => p.then((r) => r.type + ' ' + r.status, (e) => 'error ' + e.message);
const submit = (id) => new Promise((resolve) => { document.querySelector('iframe').onload = () => resolve(id + ' loaded'); document.getElementById(id).submit(); });
window.fetches = () => Promise.all([
  settle(fetch(${JSON.stringify(invoke)}, { method: 'POST', body: body('gw-simple') })),
  settle(fetch(${JSON.stringify(invoke)}, { method: 'POST', mode: 'no-cors', body: body('gw-no-cors') })),
  settle(fetch(${JSON.stringify(invoke)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body('gw-urlencoded') })),
  settle(fetch(${JSON.stringify(invoke)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body('gw-preflighted') })),
  settle(fetch(${JSON.stringify(mcp)}, { method: 'POST', mode: 'no-cors', body: ${JSON.stringify(JSON.stringify(INIT))} })),
  settle(fetch(${JSON.stringify(mcp)}, { method: 'POST', mode: 'no-cors', body: call('mcp-no-cors') })),
  settle(fetch(${JSON.stringify(mcp)}, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: call('mcp-preflighted') })),
  navigator.sendBeacon(${JSON.stringify(invoke)}, body('gw-beacon')) ? 'beacon queued' : 'beacon refused',
]);
window.gatewayForm = () => submit('gwform');
window.mcpForm = () => submit('mcpform');
</script></body></html>`;
}

/** The attacker's script in a page of the rebound name: same-origin for the browser, so it reads every answer. */
const REBOUND_SCRIPT = `
const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
window.gateway = async () => {
  const out = [];
  for (const path of ['/v1/tools', '/readyz', '/metrics', '/openapi.json']) out.push(path + ' ' + (await fetch(path)).status);
  const r = await fetch('/v1/tools/probe/invoke', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ arguments: { via: 'gw-rebind' } }) });
  out.push('invoke ' + r.status + ' ' + (await r.text()));
  return out;
};
window.mcp = async () => {
  const init = await fetch('/mcp', { method: 'POST', headers: json, body: ${JSON.stringify(JSON.stringify(INIT))} });
  const session = init.headers.get('mcp-session-id');
  const first = 'initialize ' + init.status + ' ' + (await init.text()).slice(0, 200);
  if (!session) return [first];
  const h = { ...json, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  await (await fetch('/mcp', { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  const c = await fetch('/mcp', { method: 'POST', headers: h, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'probe', arguments: { via: 'mcp-rebind' } } }) });
  return [first, 'tools/call ' + c.status + ' ' + (await c.text()).slice(0, 200)];
};
`;

beforeAll(async () => {
  const executablePath = inject('chromium');
  if (executablePath.startsWith('error: ')) throw new Error(`no Chromium for the browser tests (scripts/chromium.sh): ${executablePath.slice(7)}`);
  fleet = await startProbeFleet(inject('pulsarAdminUrl'));
  // Another local origin: another loopback address.
  attacker = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end(attackPage(fleet.gateway, fleet.mcp)));
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.2', resolve));
  attackerUrl = `http://127.0.0.2:${(attacker.address() as { port: number }).port}/`;
  profile = await mkdtemp(join(tmpdir(), 'toolwire-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=MAP ${REBIND} 127.0.0.1`,
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await new Promise((resolve) => (attacker ? attacker.close(resolve) : resolve(undefined)));
  await fleet?.close();
});

describe('web pages against the gateway and mcp serve', () => {
  it('lets a page of another origin send every request it can without asking (what ran is counted below)', async () => {
    const page = await browser.newPage();
    await page.goto(attackerUrl);
    const fetched = await page.evaluate(() => (globalThis as unknown as { fetches(): Promise<string[]> }).fetches());
    expect(fetched).toHaveLength(8);
    expect(await page.evaluate(() => (globalThis as unknown as { gatewayForm(): Promise<string> }).gatewayForm())).toBe('gwform loaded');
    expect(await page.evaluate(() => (globalThis as unknown as { mcpForm(): Promise<string> }).mcpForm())).toBe('mcpform loaded');
    await page.close();
  });

  it('runs no tool for a page under a rebound name, and shows it nothing', async () => {
    const page = await browser.newPage();
    for (const [target, fn] of [
      [fleet.gateway, 'gateway'],
      [fleet.mcp.replace(/\/mcp$/, ''), 'mcp'],
    ] as const) {
      // In an attack the page came from the attacker's server while the name pointed there,
      // then the name was pointed at us. Here the document is whatever our server answers at
      // that name (a refusal) and the attacker's script is added to it: it runs in the
      // rebound origin all the same. (Chromium would also refuse a page it had loaded from a
      // public address the way to loopback; other browsers do not, so the server must.)
      await page.goto(`http://${REBIND}:${new URL(target).port}/`);
      await page.addScriptTag({ content: REBOUND_SCRIPT });
      const seen = await page.evaluate((f) => (globalThis as unknown as Record<string, () => Promise<string[]>>)[f]!(), fn);
      expect(seen.length).toBeGreaterThan(0);
      for (const line of seen) expect(line, line).toMatch(/^\S+ 403 ?/);
    }
    await page.close();
  });

  it('runs the same calls from a client that is not a page, and none of the pages’', async () => {
    const r = await fetch(`${fleet.gateway}/v1/tools/probe/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ arguments: { via: 'gw-client' } }),
    });
    expect(await r.text()).toContain('ran gw-client');
    const client = new Client({ name: 'legit', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(fleet.mcp)));
    const answer = await client.callTool({ name: 'probe', arguments: { via: 'mcp-client' } });
    await client.close();
    expect(answer).toMatchObject({ content: [{ type: 'text', text: 'ran mcp-client' }] });
    // One call at a time, in the order published: the pages' calls, had any got through, ran before these.
    expect(fleet.probeCalls()).toEqual(['gw-client', 'mcp-client']);
  });
});
