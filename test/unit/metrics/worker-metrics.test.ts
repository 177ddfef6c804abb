import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type App } from '../../../src/assembly/app.js';
import { Catalog } from '../../../src/catalog/catalog.js';
import type { ToolService } from '../../../src/catalog/descriptors.js';
import { ToolResponseError } from '../../../src/client/tool-client.js';
import { loadSecrets } from '../../../src/secrets.js';
import { readSettings } from '../../../src/settings.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { CallInput, CallResult } from '../../../src/worker/interceptor.js';
import { captureLogger } from '../../support/harness.js';

/** Every sample line of the exposition text, by its series (name and labels as written). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe('/metrics after real calls (memory transport, the example descriptors)', () => {
  let app: App;
  let text: string;
  beforeAll(async () => {
    const settings = readSettings({ TOOLWIRE_CONFIG_DIR: 'config', TOOLWIRE_HTTP_PORT: '0' });
    app = await startApp({ settings, transport: new MemoryTransport(), secrets: loadSecrets({}), log: captureLogger('warn').log });
    const svc = app.catalog.services;
    const echo = svc.get('echo-service')!;
    const calc = svc.get('calculator-service')!;
    for (let n = 0; n < 5; n++)
      await app.client.call({ requestQueue: echo.requestQueue, responseQueue: echo.responseQueue, tool: 'echo', config: {}, arguments: { text: `t${n}` } });
    for (let n = 0; n < 2; n++) {
      const err = await app.client
        .call({ requestQueue: calc.requestQueue, responseQueue: calc.responseQueue, tool: 'calculate', config: {}, arguments: { expression: '1/0' } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ToolResponseError);
    }
    const res = await fetch(`http://${app.http!.host}:${app.http!.port}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    text = await res.text();
  });
  afterAll(async () => {
    await app.stop(100);
  });

  it('counts requests by service, tool and outcome', () => {
    const s = samples(text);
    expect(s.get('toolwire_requests_total{service="echo-service",tool="echo",outcome="answered"}')).toBe(5);
    expect(s.get('toolwire_requests_total{service="calculator-service",tool="calculate",outcome="failed"}')).toBe(2);
  });

  it('times each call: in the queue, in the plugin, and in all, with one observation per call', () => {
    const s = samples(text);
    expect(s.get('toolwire_request_duration_seconds_count{service="echo-service",tool="echo"}')).toBe(5);
    expect(s.get('toolwire_plugin_duration_seconds_count{service="echo-service",tool="echo"}')).toBe(5);
    expect(s.get('toolwire_request_duration_seconds_bucket{service="echo-service",tool="echo",le="+Inf"}')).toBe(5);
    expect(s.get('toolwire_queue_wait_seconds_count{service="calculator-service"}')).toBe(2);
    // Buckets are cumulative, and the total time holds the plugin's.
    const buckets = [...s].filter(([k]) => k.startsWith('toolwire_request_duration_seconds_bucket{service="echo-service"')).map(([, v]) => v);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    expect(s.get('toolwire_request_duration_seconds_sum{service="echo-service",tool="echo"}')!).toBeGreaterThanOrEqual(
      s.get('toolwire_plugin_duration_seconds_sum{service="echo-service",tool="echo"}')!,
    );
  });

  it('shows in-flight and queued gauges per service, the transport, the config, and Node process metrics', () => {
    const s = samples(text);
    expect(s.get('toolwire_requests_in_flight{service="echo-service"}')).toBe(0);
    expect(s.get('toolwire_requests_queued{service="joke-service"}')).toBe(0);
    expect(s.get('toolwire_transport_connected')).toBe(1);
    expect(s.get(`toolwire_config_info{version="${app.config().version!}"}`)).toBe(1);
    expect(s.get('toolwire_config_reloads_total{result="applied"}')).toBe(1);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
    // No label carries a request's own values.
    expect(text).not.toMatch(/requestId|t0|1\/0/);
  });
});

describe("Node's default metrics", () => {
  /** The metric names of an exposition text, from its TYPE lines. */
  const names = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]!);

  it('are published under their standard names, none of them with the toolwire_ prefix', async () => {
    const { collectDefaultMetrics, Registry } = await import('prom-client');
    const { WorkerMetrics } = await import('../../../src/metrics/worker-metrics.js');
    const plain = new Registry();
    collectDefaultMetrics({ register: plain });
    const defaults = names(await plain.metrics());
    const exposed = names(await new WorkerMetrics().text());
    expect(exposed).toEqual(expect.arrayContaining(['process_cpu_seconds_total', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']));
    // Every name outside toolwire_ is one of Node's defaults, and no default is also under toolwire_.
    expect(exposed.filter((n) => !n.startsWith('toolwire_')).sort()).toEqual([...defaults].sort());
    expect(exposed.filter((n) => defaults.some((d) => n === `toolwire_${d}`))).toEqual([]);
  });
});

describe('plugin events', () => {
  it('are counted per service, plugin and event', async () => {
    const { WorkerMetrics } = await import('../../../src/metrics/worker-metrics.js');
    const m = new WorkerMetrics({ processMetrics: false });
    const events = m.pluginEvents('search', 'dify-daemon');
    events.count('retry');
    events.count('retry');
    m.pluginEvents('files', 'mcp').count('reconnect');
    const s = samples(await m.text());
    expect(s.get('toolwire_plugin_events_total{service="search",plugin="dify-daemon",event="retry"}')).toBe(2);
    expect(s.get('toolwire_plugin_events_total{service="files",plugin="mcp",event="reconnect"}')).toBe(1);
  });
});

describe('series of a service that left the catalog', () => {
  const service = (id: string) => ({ id, plugin: { kind: 'module', options: {} } }) as unknown as ToolService;
  const call = (id: string) => ({ service: service(id), message: { redeliveryCount: 0 }, receivedAt: 0, startedAt: 0 }) as unknown as CallInput;
  const answered: CallResult = { outcome: 'answered', tool: undefined, pluginStartedAt: undefined, pluginEndedAt: undefined, errorType: undefined };

  it('are all dropped, the no-tool series and token counts too, and a late call of the retired instance shows nowhere', async () => {
    const { WorkerMetrics } = await import('../../../src/metrics/worker-metrics.js');
    const m = new WorkerMetrics({ processMetrics: false });
    const old = m.forService('gone');
    old.record(call('gone'), answered);
    m.pluginEvents('gone', 'module').tokens?.('gpt', 'prompt', 5);
    m.pluginEvents('kept', 'module').tokens?.('gpt', 'prompt', 7);
    expect(await m.text()).toContain('service="gone"');
    m.retain(new Catalog([service('kept')], []));
    old.record(call('gone'), answered);
    const text = await m.text();
    expect(text).not.toContain('service="gone"');
    expect(samples(text).get('toolwire_model_tokens_total{service="kept",model="gpt",kind="prompt"}')).toBe(7);
  });
});
