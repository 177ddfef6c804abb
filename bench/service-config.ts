import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A tool-service and its tools, written as descriptors the worker loads at start. */
export interface ServiceSpec {
  readonly id: string;
  readonly requestQueue: string;
  readonly responseQueue: string;
  /** `builtin:echo`, or a file name in the config dir written from `modules` (a module plugin). */
  readonly module?: string;
  /** Any other plugin object, as the descriptor's `plugin` (wins over `module`). */
  readonly plugin?: Readonly<Record<string, unknown>>;
  readonly concurrency: number;
  readonly timeoutMs?: number;
  readonly tools: readonly {
    readonly name: string;
    readonly arguments?: readonly unknown[];
    readonly timeoutMs?: number;
    readonly extra?: Record<string, unknown>;
  }[];
  readonly configParams?: readonly string[];
}

export interface WrittenConfig {
  readonly dir: string;
  remove(): Promise<void>;
}

/**
 * A fresh descriptor directory for one benchmark target or drill: its own topics, so runs
 * never see each other's messages. `modules` are JavaScript files written beside the
 * descriptors (module plugins load `./name.mjs` relative to the directory).
 */
export async function writeServiceConfig(services: readonly ServiceSpec[], modules: Readonly<Record<string, string>> = {}): Promise<WrittenConfig> {
  const dir = await mkdtemp(join(tmpdir(), 'toolwire-bench-'));
  await mkdir(join(dir, 'tool-service'));
  await mkdir(join(dir, 'tool'));
  for (const [name, source] of Object.entries(modules)) await writeFile(join(dir, name), source);
  for (const s of services) {
    const descriptor: Record<string, unknown> = {
      id: s.id,
      'request-queue': s.requestQueue,
      'response-queue': s.responseQueue,
      plugin: s.plugin ?? { kind: 'module', module: s.module ?? 'builtin:echo' },
      concurrency: s.concurrency,
    };
    if (s.timeoutMs !== undefined) descriptor['timeout-ms'] = s.timeoutMs;
    if (s.configParams) descriptor['config-params'] = s.configParams;
    await writeFile(join(dir, 'tool-service', `${s.id}.json`), JSON.stringify(descriptor, null, 2));
    for (const t of s.tools) {
      const tool: Record<string, unknown> = {
        type: 'tool-service',
        name: t.name,
        description: `${t.name} (written by the benchmark)`,
        service: s.id,
        arguments: t.arguments ?? [],
        ...t.extra,
      };
      if (t.timeoutMs !== undefined) tool['timeout-ms'] = t.timeoutMs;
      await writeFile(join(dir, 'tool', `${t.name}.json`), JSON.stringify(tool, null, 2));
    }
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The echo tool's declared arguments, as config/tool/echo.json has them. */
export const ECHO_ARGUMENTS = [
  { name: 'text', type: 'string', description: 'What to answer' },
  { name: 'chunks', type: 'number', description: 'Answer the text this many times, in chunks' },
] as const;
