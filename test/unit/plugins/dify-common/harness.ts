import { randomUUID } from 'node:crypto';
import type { DestinationStream } from 'pino';
import { buildCatalog } from '../../../../src/assembly/build-catalog.js';
import type { Catalog } from '../../../../src/catalog/catalog.js';
import type { ConfigEntry } from '../../../../src/config/config-store.js';
import { createLogger } from '../../../../src/logging.js';
import { isAsyncIterable, type Plugin, type PluginContext, type PluginFactory } from '../../../../src/plugins/plugin.js';
import { PluginRegistry } from '../../../../src/plugins/registry.js';
import { loadSecrets } from '../../../../src/secrets.js';
import { prepareArguments } from '../../../../src/arguments/prepare-arguments.js';
import { PluginFaultBoard } from '../../../../src/plugins/plugin-faults.js';
import { ExecPolicy } from '../../../../src/policy/exec-policy.js';
import { asServed } from '../../../support/harness.js';

/**
 * Names in these tests resolve here, never through DNS: `*.example` to example.com's public
 * address (never dialled: only a plugin would fetch it, and the fakes do not), `*.internal`
 * to a private one.
 */
export const testResolver = async (host: string): Promise<string[]> => {
  if (host.endsWith('.example')) return ['93.184.215.14'];
  if (host.endsWith('.internal')) return ['10.0.0.7'];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

/** Every line the logger wrote, as text (what would reach a log file). */
export class LogCapture implements DestinationStream {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  text(): string {
    return this.lines.join('');
  }
}

export interface HarnessOptions {
  readonly factory: PluginFactory<never, never>;
  readonly kind: string;
  readonly settings: Record<string, string | undefined>;
  readonly env?: Record<string, string>;
  readonly servicePlugin?: Record<string, unknown>;
  readonly tools: Record<string, unknown>[];
}

export interface Harness {
  readonly plugin: Plugin;
  readonly catalog: Catalog;
  readonly logs: LogCapture;
  readonly ctx: PluginContext;
  /** What the plugin counted besides calls (`retry`...). */
  readonly events: string[];
  /** Invoke a tool and join its chunks, the way the worker does in single mode. */
  call(
    tool: string,
    args?: Record<string, unknown>,
    opts?: { signal?: AbortSignal; user?: string; onChunk?: (c: string) => void; timeoutMs?: number; requestId?: string },
  ): Promise<string>;
}

export function serviceEntry(kind: string, plugin: Record<string, unknown> = {}): ConfigEntry {
  return {
    type: 'tool-service',
    key: 'dify',
    source: 'tool-service/dify.json',
    value: {
      id: 'dify',
      'request-queue': 'non-persistent://tg/request/dify',
      'response-queue': 'non-persistent://tg/response/dify',
      'config-params': ['tool-id'],
      plugin: { kind, ...plugin },
    },
  };
}

export function toolEntries(tools: Record<string, unknown>[]): ConfigEntry[] {
  return tools.map((t) => ({
    type: 'tool',
    key: String(t['name']),
    source: `tool/${String(t['name'])}.json`,
    value: { type: 'tool-service', service: 'dify', 'tool-id': t['name'], ...t },
  }));
}

export async function loadCatalog(
  o: HarnessOptions,
  logs = new LogCapture(),
): Promise<{ catalog: Catalog; ctx: PluginContext; logs: LogCapture; events: string[] }> {
  const log = createLogger({ level: 'debug', destination: logs });
  const events: string[] = [];
  const ctx: PluginContext = {
    log,
    configDir: '.',
    secrets: loadSecrets(o.env ?? {}),
    settings: o.settings,
    faults: new PluginFaultBoard(),
    resolve: testResolver,
    events: { count: (e) => void events.push(e) },
  };
  const registry = new PluginRegistry().register(o.factory);
  const catalog = await buildCatalog([serviceEntry(o.kind, o.servicePlugin), ...toolEntries(o.tools)], registry, ctx, { policy: new ExecPolicy('directory') });
  return { catalog, ctx, logs, events };
}

export async function harness(o: HarnessOptions): Promise<Harness> {
  const { catalog, ctx, logs, events } = await loadCatalog(o);
  const service = catalog.services.get('dify');
  if (!service) throw new Error('no service');
  const plugin: Plugin = await o.factory.create(asServed(service), ctx);
  return {
    plugin,
    catalog,
    logs,
    ctx,
    events,
    async call(name, args = {}, opts = {}) {
      const tool = catalog.tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      const requestId = opts.requestId ?? randomUUID();
      let out = '';
      const observation = plugin.invoke({
        requestId,
        service,
        tool,
        config: tool.config,
        arguments: prepareArguments(tool.parameters, tool.runtimeParameters, args),
        user: opts.user,
        stream: false,
        timeoutMs: opts.timeoutMs ?? 120_000,
        signal: opts.signal ?? new AbortController().signal,
        log: ctx.log.child({ requestId, tool: name }),
      });
      // Dify plugins stream their invoke messages: they always give chunks.
      if (!isAsyncIterable(observation)) throw new Error(`${plugin.kind} answered in one piece`);
      for await (const chunk of observation as AsyncIterable<string>) {
        opts.onChunk?.(chunk);
        out += chunk;
      }
      return out;
    },
  };
}

/** A promise and its resolver, for steps one side waits on. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
