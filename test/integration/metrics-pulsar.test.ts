/**
 * /metrics after real calls over the broker, on both request topic kinds: the series a
 * scraper reads (names, labels) and counts that match the calls made.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { App } from '../../src/assembly/app.js';
import { ToolClient, ToolResponseError } from '../../src/client/tool-client.js';
import type { Transport } from '../../src/transport/transport.js';
import { serviceDescriptor, toolDescriptor } from '../support/descriptors.js';
import { captureLogger } from '../support/harness.js';
import { brokerTransport, deleteTopic, removeDir, startPulsarApp, suffix, writeConfigDir } from '../support/pulsar-app.js';

const adminUrl = inject('pulsarAdminUrl');
const tag = suffix();
const KINDS = ['persistent', 'non-persistent'] as const;
/** The calculator, taking requests on a `kind` topic. */
const calc = (kind: (typeof KINDS)[number]) =>
  serviceDescriptor(`calc-${kind}`, { plugin: { kind: 'module', module: 'builtin:calculator' } }, { requests: kind, tag });
const queues = (kind: (typeof KINDS)[number]) => ({ request: calc(kind)['request-queue'], response: calc(kind)['response-queue'] });

let dir: string;
let app: App;
let agent: Transport;
let client: ToolClient;

beforeAll(async () => {
  const { log } = captureLogger('warn');
  dir = await writeConfigDir({
    services: KINDS.map(calc),
    tools: KINDS.map((kind) => toolDescriptor(`calc-${kind}`, `calc-${kind}`, { arguments: [{ name: 'expression', type: 'string', required: true }] })),
  });
  app = await startPulsarApp({ adminUrl, configDir: dir, log, env: { TOOLWIRE_HTTP_PORT: '0' } });
  agent = await brokerTransport(adminUrl, log);
  client = new ToolClient(agent, log);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await app?.stop();
  await removeDir(dir);
  for (const kind of KINDS) await deleteTopic(adminUrl, queues(kind).request).catch(() => undefined);
});

describe.each(KINDS)('metrics of calls on a %s request topic', (kind) => {
  it('counts each call by service, tool and outcome, and times every one', async () => {
    const q = queues(kind);
    for (let n = 0; n < 4; n++)
      expect(
        await client.call({ requestQueue: q.request, responseQueue: q.response, tool: `calc-${kind}`, config: {}, arguments: { expression: `${n}+1` } }),
      ).toBe(String(n + 1));
    const err = await client
      .call({ requestQueue: q.request, responseQueue: q.response, tool: `calc-${kind}`, config: {}, arguments: { expression: '1/0' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolResponseError);
    const labels = `service="calc-${kind}",tool="calc-${kind}"`;
    // A scrape waits for the answers already handed to the broker; polled all the same, as a
    // scraper would, so that a slow machine delays the test instead of failing it.
    await vi.waitFor(
      async () => {
        const text = await (await fetch(`http://${app.http!.host}:${app.http!.port}/metrics`)).text();
        const value = (series: string): number | undefined => {
          const line = text.split('\n').find((l) => l.startsWith(`${series} `));
          return line === undefined ? undefined : Number(line.slice(series.length + 1));
        };
        expect(value(`toolwire_requests_total{${labels},outcome="answered"}`)).toBe(4);
        expect(value(`toolwire_requests_total{${labels},outcome="failed"}`)).toBe(1);
        expect(value(`toolwire_request_duration_seconds_count{${labels}}`)).toBe(5);
        expect(value(`toolwire_plugin_duration_seconds_count{${labels}}`)).toBe(5);
        expect(value(`toolwire_queue_wait_seconds_count{service="calc-${kind}"}`)).toBe(5);
        expect(value(`toolwire_requests_in_flight{service="calc-${kind}"}`)).toBe(0);
        expect(value('toolwire_transport_connected')).toBe(1);
      },
      { timeout: 15_000, interval: 200 },
    );
  });
});
