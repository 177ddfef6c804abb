import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandIo } from './command.js';

/** The flags every import command takes for the descriptors it writes. */
export const DESCRIPTOR_FLAGS = {
  service: { type: 'string' },
  'request-queue': { type: 'string' },
  'response-queue': { type: 'string' },
  prefix: { type: 'string' },
  include: { type: 'string' },
  exclude: { type: 'string' },
  out: { type: 'string' },
} as const;

/**
 * An imported tool-service descriptor: TrustGraph's default queues for `id` unless the flags
 * name others, one required config param that picks the tool, and the plugin object.
 */
export function importedService(
  id: string,
  values: { 'request-queue'?: string | undefined; 'response-queue'?: string | undefined },
  configParam: string,
  plugin: Record<string, unknown>,
): Record<string, unknown> {
  return {
    id,
    'request-queue': values['request-queue'] ?? `non-persistent://tg/request/${id}`,
    'response-queue': values['response-queue'] ?? `non-persistent://tg/response/${id}`,
    'config-params': [{ name: configParam, required: true }],
    plugin,
  };
}

/** A comma-separated flag value as a set; undefined when the flag was not given. */
export function listFlag(flagValue: string | undefined): Set<string> | undefined {
  return flagValue === undefined
    ? undefined
    : new Set(
        flagValue
          .split(',')
          .map((item) => item.trim())
          .filter(Boolean),
      );
}

/**
 * An import's result: one JSON document on stdout, or with `out` the descriptor files
 * (`out/tool-service/<id>.json`, `out/tool/<name>.json`), ready for `toolwire config import`.
 */
export async function writeDescriptors(
  io: CommandIo,
  out: string | undefined,
  service: Record<string, unknown>,
  tools: readonly Record<string, unknown>[],
  offered: number,
): Promise<void> {
  if (!out) {
    io.stdout.write(`${JSON.stringify({ 'tool-service': service, tools }, null, 2)}\n`);
    return;
  }
  await mkdir(join(out, 'tool-service'), { recursive: true });
  await mkdir(join(out, 'tool'), { recursive: true });
  await writeFile(join(out, 'tool-service', `${String(service['id'])}.json`), `${JSON.stringify(service, null, 2)}\n`);
  for (const d of tools) await writeFile(join(out, 'tool', `${String(d['name'])}.json`), `${JSON.stringify(d, null, 2)}\n`);
  io.stderr.write(`${tools.length} tool(s) of ${offered} written to ${out}\n`);
}
