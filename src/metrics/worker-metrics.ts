import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { HistogramSeries, LatencyHistogram } from './latency-histogram.js';
import { AnswerHandoffs } from './answer-handoffs.js';
import { LabelledCounts } from './labelled-counts.js';
import type { Catalog } from '../catalog/catalog.js';
import type { ConfigStatus } from '../config/config-follower.js';
import type { PluginEvents } from '../plugins/plugin.js';
import type { CallInput, CallResult, Interceptor } from '../worker/interceptor.js';
import type { Outcome } from '../worker/outcome.js';
import type { WorkerEvents } from '../worker/worker.js';

/**
 * Seconds, from an in-process call (a tenth of a millisecond) to a long tool run (two
 * minutes), fine at the low end, where most calls fall (docs/benchmarks-rationale.md).
 */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The longest a scrape waits for answers already handed to the broker to settle. */
const SCRAPE_SETTLE_MS = 2_000;

/** What the gauges read at scrape time. */
export interface MetricsSources {
  /** Per service: requests being handled, and requests of a non-persistent topic waiting for a slot. */
  readonly services: () => readonly { readonly service: string; readonly inFlight: number; readonly queued: number }[];
  readonly transportConnected: () => boolean;
  readonly config?: () => ConfigStatus;
}

/**
 * The worker's metrics, exposed through prom-client's registry: requests by service, tool and
 * outcome; latency histograms by service and tool (in the queue before a slot, in the plugin,
 * from receipt to the final publish); in flight and queued per service; redeliveries, shed
 * requests; config reloads; and Node's process and event-loop metrics. Labels are bounded: a
 * service id and a tool name from the catalog, never anything a request chose. The hot path
 * adds to plain per-series numbers; the counters read them when scraped.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly services = new Map<string, ServiceMetrics>();
  /** Plugin events by service, plugin and event. */
  private readonly pluginEventCounts = new LabelledCounts();
  /** Model tokens plugins spent, by service, model and kind. */
  private readonly tokenCounts = new LabelledCounts();
  private readonly total: LatencyHistogram;
  private readonly plugin: LatencyHistogram;
  private readonly queue: LatencyHistogram;
  private readonly handoffs = new AnswerHandoffs();

  constructor(options: { readonly processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    const services = this.services;
    this.total = new LatencyHistogram(
      'toolwire_request_duration_seconds',
      'From receipt of a request to its final answer being published.',
      LATENCY_BUCKETS,
      this.registry,
    );
    this.plugin = new LatencyHistogram('toolwire_plugin_duration_seconds', 'Time in the plugin (the tool itself).', LATENCY_BUCKETS, this.registry);
    this.queue = new LatencyHistogram('toolwire_queue_wait_seconds', 'From receipt of a request to a free slot.', LATENCY_BUCKETS, this.registry);
    new Counter({
      name: 'toolwire_requests_total',
      help: 'Requests settled, by service, tool and outcome (answered, failed, nacked, dead-lettered, duplicate).',
      labelNames: ['service', 'tool', 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const m of services.values())
          for (const [tool, outcomes] of m.outcomes) for (const [outcome, n] of outcomes) this.inc({ service: m.service, tool, outcome }, n);
      },
    });
    new Counter({
      name: 'toolwire_redeliveries_total',
      help: 'Requests delivered again by the broker (after a nack, a crash or a timeout).',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const m of services.values()) this.inc({ service: m.service }, m.redelivered);
      },
    });
    new Counter({
      name: 'toolwire_requests_shed_total',
      help: 'Requests answered without running: a full backlog, or a service blocked by abandoned calls.',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const m of services.values()) this.inc({ service: m.service }, m.shedCount);
      },
    });
    const pluginEvents = this.pluginEventCounts;
    new Counter({
      name: 'toolwire_plugin_events_total',
      help: "Plugins' own events besides calls: Dify and OpenAPI retries, MCP reconnects, OAuth2 tokens fetched.",
      labelNames: ['service', 'plugin', 'event'],
      registers,
      collect() {
        this.reset();
        for (const [service, plugin, event, n] of pluginEvents) this.inc({ service, plugin, event }, n);
      },
    });
    const tokens = this.tokenCounts;
    new Counter({
      name: 'toolwire_model_tokens_total',
      help: 'Model tokens spent by agent strategies (dify-agent), by service, model and kind (prompt, completion).',
      labelNames: ['service', 'model', 'kind'],
      registers,
      collect() {
        this.reset();
        for (const [service, model, kind, n] of tokens) this.inc({ service, model, kind }, n);
      },
    });
    // Node's defaults keep their standard names (process_*, nodejs_*), which the community's Node.js dashboards query.
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** The gauges that read the worker and its config at scrape time. */
  watch(sources: MetricsSources): void {
    const registers = [this.registry];
    new Gauge({
      name: 'toolwire_requests_in_flight',
      help: 'Requests being handled now.',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const s of sources.services()) this.set({ service: s.service }, s.inFlight);
      },
    });
    new Gauge({
      name: 'toolwire_requests_queued',
      help: 'Requests of non-persistent topics taken from the broker and waiting for a slot.',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const s of sources.services()) this.set({ service: s.service }, s.queued);
      },
    });
    new Gauge({
      name: 'toolwire_transport_connected',
      help: '1 while the broker is reachable.',
      registers,
      collect() {
        this.set(sources.transportConnected() ? 1 : 0);
      },
    });
    const config = sources.config;
    if (!config) return;
    new Counter({
      name: 'toolwire_config_reloads_total',
      help: 'Config versions read, by what became of them.',
      labelNames: ['result'],
      registers,
      collect() {
        const r = config().reloads;
        this.reset();
        this.inc({ result: 'applied' }, r.applied);
        this.inc({ result: 'rejected' }, r.rejected);
        this.inc({ result: 'failed' }, r.failed);
      },
    });
    new Gauge({
      name: 'toolwire_config_rejected',
      help: '1 while the newest config read is refused and an older one serves.',
      registers,
      collect() {
        this.set(config().rejected ? 1 : 0);
      },
    });
    new Gauge({
      name: 'toolwire_config_info',
      help: 'The config version served (1 on its series).',
      labelNames: ['version'],
      registers,
      collect() {
        this.reset();
        const v = config().version;
        if (v) this.set({ version: v }, 1);
      },
    });
  }

  /** Where one service's plugin counts its events. */
  pluginEvents(service: string, plugin: string): PluginEvents {
    const counts = this.pluginEventCounts;
    const tokens = this.tokenCounts;
    return {
      count(event) {
        counts.add(service, plugin, event);
      },
      tokens(model, kind, count) {
        tokens.add(service, model, kind, count);
      },
    };
  }

  /** The worker's events, counted here: shed requests, and reloads (series of what left the catalog go). */
  workerEvents(): WorkerEvents {
    return {
      shed: (service) => this.forService(service).shed(),
      applied: (catalog) => this.retain(catalog),
    };
  }

  /** One service's metrics. */
  forService(service: string): ServiceMetrics {
    let m = this.services.get(service);
    if (!m) {
      m = new ServiceMetrics(service, this.total, this.plugin, this.queue, this.handoffs);
      this.services.set(service, m);
    }
    return m;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text, once every answer handed to the broker before the scrape has been counted. */
  async text(): Promise<string> {
    await this.handoffs.settled(SCRAPE_SETTLE_MS);
    return this.registry.metrics();
  }

  /**
   * Drop the series of services, tools and plugins the catalog no longer has, so that config
   * churn does not grow the exposition. A call of a removed tool still running counts into
   * a series again when it settles (it happened); the next change drops it.
   */
  retain(catalog: Catalog): void {
    for (const [id, m] of this.services) {
      if (!catalog.services.has(id)) {
        m.drop();
        this.services.delete(id);
      } else m.retainTools(new Set(catalog.toolsOf(id).map((tool) => tool.name)));
    }
    this.pluginEventCounts.retain((service, plugin) => catalog.services.get(service)?.plugin?.kind === plugin);
    this.tokenCounts.retain((service) => catalog.services.has(service));
  }
}

interface ToolSeries {
  readonly outcomes: Map<Outcome, number>;
  readonly total: HistogramSeries;
  readonly plugin: HistogramSeries;
}

/** A service's series, each tool's found once: the hot path adds numbers. */
export class ServiceMetrics {
  private readonly tools = new Map<string, ToolSeries>();
  private readonly queue: HistogramSeries;
  /** Set once the service left the catalog: calls still running record where no scrape reads. */
  private dropped = false;
  redelivered = 0;
  shedCount = 0;

  constructor(
    readonly service: string,
    private readonly total: LatencyHistogram,
    private readonly plugin: LatencyHistogram,
    private readonly queueHistogram: LatencyHistogram,
    private readonly handoffs: AnswerHandoffs,
  ) {
    this.queue = queueHistogram.child({ service });
  }

  /** Drop every series of this service (it left the catalog). */
  drop(): void {
    this.dropped = true;
    this.removeTools(() => true);
    this.queueHistogram.remove(this.queue);
  }

  /** Drop the series of tools not in `names` (requests of no declared tool keep theirs). */
  retainTools(names: ReadonlySet<string>): void {
    this.removeTools((tool) => tool !== '' && !names.has(tool));
  }

  private removeTools(gone: (tool: string) => boolean): void {
    for (const [tool, s] of this.tools) {
      if (!gone(tool)) continue;
      this.tools.delete(tool);
      this.total.remove(s.total);
      this.plugin.remove(s.plugin);
    }
  }

  /** Outcome counts by tool, for the counter's scrape. */
  get outcomes(): Iterable<[string, Map<Outcome, number>]> {
    return [...this.tools].map(([tool, toolMetrics]) => [tool, toolMetrics.outcomes]);
  }

  private series(tool: string): ToolSeries {
    let s = this.tools.get(tool);
    if (!s) {
      const labels = { service: this.service, tool };
      // A retired instance's late calls go into series no registry holds, so no retain has to reach them.
      if (this.dropped)
        return { outcomes: new Map(), total: new HistogramSeries(labels, LATENCY_BUCKETS), plugin: new HistogramSeries(labels, LATENCY_BUCKETS) };
      s = { outcomes: new Map(), total: this.total.child(labels), plugin: this.plugin.child(labels) };
      this.tools.set(tool, s);
    }
    return s;
  }

  /** The final answer of a request goes to the broker now: a scrape from now on waits for its outcome. Returns its ticket. */
  answering(): number {
    return this.handoffs.hand();
  }

  /** The request of a ticket `answering` gave has settled (or its handling ended without settling it: a bug below), and is counted. */
  settled(ticket: number): void {
    this.handoffs.settle(ticket);
  }

  /** A request settled: its outcome and times. */
  record(input: CallInput, result: CallResult): void {
    const now = performance.now();
    const s = this.series(result.tool?.name ?? '');
    s.outcomes.set(result.outcome, (s.outcomes.get(result.outcome) ?? 0) + 1);
    if (input.message.redeliveryCount > 0) this.redelivered++;
    this.queue.observe((input.startedAt - input.receivedAt) / 1000);
    s.total.observe((now - input.receivedAt) / 1000);
    const { pluginStartedAt, pluginEndedAt } = result;
    if (pluginStartedAt !== undefined && pluginEndedAt !== undefined) s.plugin.observe((pluginEndedAt - pluginStartedAt) / 1000);
  }

  /** A request answered without running (a full backlog, a blocked service). */
  shed(): void {
    this.shedCount++;
  }
}

/**
 * The metrics of each request, read from its result once it has settled. The handler tells
 * the input's `answering` observer when the final answer goes to the broker; the ticket that
 * moment takes stays in this call's closure until the outcome is counted, so that a scrape
 * waits for that outcome and no more.
 */
export function metricsInterceptor(serviceMetrics: ServiceMetrics): Interceptor {
  return (input, next) => {
    let ticket: number | undefined;
    const outer = input.answering;
    // Written out, not spread: a spread of the input cost about 1 µs a request (docs/benchmarks-rationale.md).
    const observed: CallInput = {
      service: input.service,
      message: input.message,
      receivedAt: input.receivedAt,
      startedAt: input.startedAt,
      answering: () => {
        ticket = serviceMetrics.answering();
        outer?.();
      },
    };
    return next(observed).then(
      (result) => {
        serviceMetrics.record(input, result);
        if (ticket !== undefined) serviceMetrics.settled(ticket);
        return result;
      },
      (err: unknown) => {
        if (ticket !== undefined) serviceMetrics.settled(ticket);
        throw err;
      },
    );
  };
}
