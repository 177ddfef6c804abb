import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { startApp } from '../../src/assembly/app.js';
import { loadSecrets } from '../../src/secrets.js';
import { readSettings } from '../../src/settings.js';
import { MemoryTransport } from '../../src/transport/memory-transport.js';
import { REPO_ROOT } from '../child-process.js';
import { dashboardSvg, type PanelData } from './panel-svg.js';
import { prometheusBinary, startPrometheus } from './prometheus.js';

interface Dashboard {
  readonly title: string;
  readonly panels: readonly {
    readonly title: string;
    readonly fieldConfig?: { defaults?: { unit?: string } };
    readonly targets: readonly { readonly expr: string; readonly legendFormat?: string }[];
  }[];
}

/** Grafana's variables as this run sets them: every service, a 10 s rate window. */
const expand = (expr: string) => expr.replaceAll('$__rate_interval', '10s').replaceAll('$service', '.*');
const legend = (format: string | undefined, metric: Record<string, string>) =>
  (format ?? JSON.stringify(metric)).replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => metric[k] ?? '');

/**
 * Tools that make the panels worth reading: one slow with a spread of times, and one that fails
 * now and then, the load's only failures (by design, under their own tool name).
 */
const SLOW = 'export default async () => { await new Promise((r) => setTimeout(r, 5 + Math.random() * 60)); return "slow"; };\n';
const FLAKY = 'export default async ({ arguments: a }) => { if (Math.random() < 0.15) throw new Error("flaky failed"); return "ok " + a.n; };\n';

/**
 * The dashboard rendered from a real run, the way a person would look at it: a worker (memory
 * transport) under a mixed load of the example tools plus a slow and a flaky one, scraped
 * every second by a real Prometheus (built from the Go module proxy), each panel's own
 * queries evaluated by it over the run, and drawn as an SVG (and a PNG where rsvg-convert is).
 */
export async function renderDashboard(o: { seconds: number; out: string }): Promise<{ svg: string; png: string | undefined }> {
  const dashboard = JSON.parse(await readFile(join(REPO_ROOT, 'dashboards', 'toolwire.json'), 'utf8')) as Dashboard;
  const bin = await prometheusBinary();
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-dashboard-'));
  await cp(join(REPO_ROOT, 'config'), dir, { recursive: true });
  await writeFile(join(dir, 'slow.mjs'), SLOW);
  await writeFile(join(dir, 'flaky.mjs'), FLAKY);
  const svc = (id: string, module: string) =>
    JSON.stringify({
      id,
      'request-queue': `persistent://tg/flow/${id}`,
      'response-queue': `non-persistent://tg/response/${id}`,
      plugin: { kind: 'module', module },
      concurrency: 8,
    });
  await writeFile(join(dir, 'tool-service', 'slow-service.json'), svc('slow-service', './slow.mjs'));
  await writeFile(join(dir, 'tool-service', 'flaky-service.json'), svc('flaky-service', './flaky.mjs'));
  await writeFile(join(dir, 'tool', 'slow.json'), JSON.stringify({ name: 'slow', service: 'slow-service' }));
  await writeFile(join(dir, 'tool', 'flaky.json'), JSON.stringify({ name: 'flaky', service: 'flaky-service', arguments: [{ name: 'n', type: 'number' }] }));
  const app = await startApp({
    settings: readSettings({ TOOLWIRE_CONFIG_DIR: dir, TOOLWIRE_HTTP_PORT: '0' }),
    transport: new MemoryTransport(),
    secrets: loadSecrets({}),
    log: pino({ level: 'silent' }),
  });
  const prometheus = await startPrometheus(bin, `127.0.0.1:${app.http!.port}`);
  try {
    const calls: [string, Record<string, unknown>][] = [
      ['echo', { text: 'hi' }],
      ['calculate', { expression: '(2+3)*4' }],
      ['tell-joke', { topic: 'dashboards' }],
      ['slow', {}],
      ['flaky', { n: 1 }],
    ];
    const start = Date.now() / 1000;
    const end = Date.now() + o.seconds * 1000;
    // Live config while it runs: a service added at a third (applied), a broken file at half
    // (refused: the last good catalog serves), removed at two thirds (the refusal clears).
    const at = (fraction: number, change: () => Promise<void>) => setTimeout(() => void change(), o.seconds * 1000 * fraction);
    const timers = [
      at(1 / 3, async () => {
        await writeFile(join(dir, 'tool-service', 'extra-service.json'), svc('extra-service', 'builtin:echo'));
        await writeFile(join(dir, 'tool', 'extra.json'), JSON.stringify({ name: 'extra', service: 'extra-service' }));
      }),
      at(1 / 2, () => writeFile(join(dir, 'tool', 'broken.json'), '{"name": "broken", "service": "no-such-service"}')),
      at(2 / 3, () => rm(join(dir, 'tool', 'broken.json'))),
    ];
    let n = 0;
    // Load that changes over the run: more agents in the middle third.
    await Promise.all(
      Array.from({ length: 12 }, async (_, agent) => {
        while (Date.now() < end) {
          const third = Math.floor(((Date.now() / 1000 - start) / o.seconds) * 3);
          if (agent >= 4 && third !== 1) {
            await new Promise((r) => setTimeout(r, 200));
            continue;
          }
          const [tool, args] = calls[n++ % calls.length]!;
          const t = app.catalog.tools.get(tool)!;
          const s = app.catalog.services.get(t.service)!;
          await app.client.call({ requestQueue: s.requestQueue, responseQueue: s.responseQueue, tool, config: {}, arguments: args }).catch(() => undefined);
          await new Promise((r) => setTimeout(r, 5));
        }
      }),
    );
    timers.forEach(clearTimeout);
    await new Promise((r) => setTimeout(r, 3000));
    const panels: PanelData[] = [];
    for (const p of dashboard.panels) {
      const lines = [];
      for (const t of p.targets) {
        for (const series of await prometheus.queryRange(expand(t.expr), start, Date.now() / 1000, 2)) {
          lines.push({
            label: legend(t.legendFormat, series.metric),
            points: series.values.map(([ts, v]) => [ts, Number(v)] as const).filter(([, v]) => Number.isFinite(v)),
          });
        }
      }
      panels.push({ title: p.title, unit: p.fieldConfig?.defaults?.unit ?? '', lines });
    }
    const svg = join(o.out, 'dashboard-latest.svg');
    await writeFile(svg, dashboardSvg(`${dashboard.title}: ${o.seconds} s of mixed load, queries evaluated by Prometheus`, panels));
    const png = join(o.out, 'dashboard-latest.png');
    const converted = await promisify(execFile)('rsvg-convert', ['-o', png, svg]).then(
      () => true,
      () => false,
    );
    return { svg, png: converted ? png : undefined };
  } finally {
    await prometheus.stop();
    await app.stop(1000);
    await rm(dir, { recursive: true, force: true });
  }
}
