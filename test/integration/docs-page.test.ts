/**
 * /docs in a real browser (Debian's Chromium, driven by playwright-core): the page is Swagger
 * UI from the installed swagger-ui-dist, rendering the gateway's /openapi.json. It lists the
 * tools, calls `calculate` with "Try it out" and shows the answer, and every request it makes
 * stays on this machine. The page is guarded as /v1/ is.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { waitUntil } from '../support/pulsar-app.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const children: ChildProcess[] = [];
let browser: BrowserContext;
let profile: string;

/** `toolwire run` with the example descriptors on the embedded transport; its HTTP base URL. */
async function run(env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, [join(REPO, 'bin/toolwire.js'), 'run', '--http-port', '0', '--log-format', 'json'], {
    cwd: REPO,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], LOG_LEVEL: 'info', TOOLWIRE_TRANSPORT: 'memory', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  let http: string | undefined;
  await waitUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`toolwire run exited with ${child.exitCode}:\n${stderr.slice(-3000)}`);
      http = /"http":"(http:\/\/[^"]+)"/.exec(stderr)?.[1];
      return http !== undefined;
    },
    30_000,
    'toolwire run serving',
  );
  return http!;
}

/** A GET with the Host header a rebound name would send. */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    })
      .on('error', reject)
      .end();
  });
}

beforeAll(async () => {
  const executablePath = inject('chromium');
  if (executablePath.startsWith('error: ')) throw new Error(`no Chromium for the browser tests (scripts/chromium.sh): ${executablePath.slice(7)}`);
  profile = await mkdtemp(join(tmpdir(), 'toolwire-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 1500 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('/docs', () => {
  it('lists the tools, calls calculate from the page and shows its answer, asking nothing of any other host', async () => {
    const base = await run();
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    await page.goto(`${base}/docs`);
    for (const tool of ['calculate', 'current-time', 'echo', 'tell-joke'])
      await page.locator(`.opblock-summary-path[data-path="/v1/tools/${tool}/invoke"]`).waitFor();
    const op = page.locator('#operations-default-post_v1_tools_calculate_invoke');
    await op.locator('.opblock-summary').click();
    // "Try it out" is on from the start (tryItOutEnabled): the body is editable at once.
    await op.locator('textarea.body-param__text').fill(JSON.stringify({ arguments: { expression: '6 * 7' } }, null, 2));
    await op.locator('button.execute').click();
    const answer = op.locator('.live-responses-table .response-col_description pre');
    await answer.first().waitFor();
    await expect.poll(() => answer.first().textContent(), { timeout: 30_000 }).toContain('"response":"42"');
    // The screenshot in the docs: the tools above, the call and its answer below.
    await page.locator('.opblock-summary-path[data-path="/v1/tools"]').evaluate((el) => el.scrollIntoView({ block: 'start' }));
    // Written over docs/try-it.png only when asked, so a test run leaves the checkout as it was.
    await page.screenshot(process.env['TOOLWIRE_UPDATE_SCREENSHOTS'] ? { path: join(REPO, 'docs/try-it.png') } : {});
    await page.close();
    const own = new URL(base).origin;
    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((u) => !u.startsWith(`${own}/`) && !u.startsWith('data:'))).toEqual([]);
  });

  it('is refused as /v1/ is: under a foreign Host, and without the token when there is one', async () => {
    const open = await run();
    expect(await getWithHost(`${open}/docs`, 'rebind.test')).toBe(403);
    const guarded = await run({ TOOLWIRE_HTTP_TOKEN: 'env:DOCS_TOKEN', DOCS_TOKEN: 'docs-secret' });
    expect((await fetch(`${guarded}/docs`)).status).toBe(401);
    expect((await fetch(`${guarded}/docs/swagger-ui-bundle.js`)).status).toBe(401);
    const ok = await fetch(`${guarded}/docs`, { headers: { authorization: 'Bearer docs-secret' } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-security-policy')).toContain("connect-src 'self'");
  });
});
