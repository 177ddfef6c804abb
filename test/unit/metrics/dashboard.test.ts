/**
 * dashboards/toolwire.json reads series the worker exports: every metric name its queries
 * use appears in a real /metrics scrape of a worker that answered calls.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startApp } from '../../../src/assembly/app.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import { captureLogger } from '../../support/harness.js';

const DASHBOARD = fileURLToPath(new URL('../../../dashboards/toolwire.json', import.meta.url));
/** The series a query reads: the product's own (toolwire_) and Node's defaults under their standard names. */
const SERIES = /\b(?:toolwire|process|nodejs)_[a-z0-9_]+/g;

describe('the Grafana dashboard', () => {
  it('queries only series a worker exports, with labels it sets', async () => {
    const dash = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const exprs = dash.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(8);
    const app = await startApp({
      settings: readSettings({ TOOLWIRE_CONFIG_DIR: 'config', TOOLWIRE_HTTP_PORT: '0' }),
      transport: new MemoryTransport(),
      secrets: loadSecrets({}),
      log: captureLogger('warn').log,
    });
    try {
      const echo = app.catalog.services.get('echo-service')!;
      await app.client.call({ requestQueue: echo.requestQueue, responseQueue: echo.responseQueue, tool: 'echo', config: {}, arguments: { text: 'x' } });
      const text = await (await fetch(`http://${app.http!.host}:${app.http!.port}/metrics`)).text();
      const exported = new Set(
        text
          .split('\n')
          .filter((l) => l.startsWith('# TYPE '))
          .flatMap((l) => {
            const [, , name, type] = l.split(' ');
            return type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!];
          }),
      );
      const used = new Set(exprs.flatMap((e) => e.match(SERIES) ?? []));
      expect([...used].filter((n) => !exported.has(n))).toEqual([]);
      // Labels a query groups by are labels of its series (where the scrape has samples of them).
      for (const e of exprs) {
        const samples = text.split('\n').filter((l) => (e.match(SERIES) ?? []).some((n) => l.startsWith(`${n}{`)));
        if (samples.length === 0) continue;
        for (const m of e.matchAll(/by \(([^)]+)\)/g)) {
          for (const label of m[1]!.split(',').map((x) => x.trim()))
            expect(
              samples.some((l) => l.includes(`${label}="`)),
              `${label} in ${e}`,
            ).toBe(true);
        }
      }
    } finally {
      await app.stop(100);
    }
  });
});
