import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigItem } from '../src/config/config-store.js';

/** Tools per generated service: 1,000 services make a fleet of 10,000 tools. */
export const TOOLS_PER_SERVICE = 10;

export interface FleetShape {
  /** How many services; each has TOOLS_PER_SERVICE tools. */
  readonly services: number;
  /** A prefix of the ids and tool names, so that two fleets can share a broker. */
  readonly prefix: string;
  /** The request topic of service `n`. */
  readonly requestQueue: (n: number) => string;
  readonly responseQueue: string;
  /** Whether the services name a plugin (builtin echo): without one a worker keeps them in its catalog and leaves them to other workers. */
  readonly served: boolean;
}

export const fleetServiceId = (shape: FleetShape, n: number): string => `${shape.prefix}-${n}`;
export const fleetToolName = (shape: FleetShape, n: number, t: number): string => `${shape.prefix}-${n}-t${t}`;

/**
 * One tool of the fleet, told from its service's others by its `op` config value. Its answer (builtin echo, called with no arguments) is the JSON of its
 * hidden `version` parameter, so a caller sees when a change of the descriptor is served.
 */
export function fleetTool(shape: FleetShape, n: number, t: number, version: string): ConfigItem {
  const name = fleetToolName(shape, n, t);
  return {
    type: 'tool',
    key: name,
    value: JSON.stringify({
      type: 'tool-service',
      name,
      description: `tool ${t} of ${fleetServiceId(shape, n)} (generated)`,
      service: fleetServiceId(shape, n),
      op: `t${t}`,
      arguments: [{ name: 'version', type: 'string', form: 'form', description: 'The descriptor version it answers' }],
      'runtime-parameters': { version },
    }),
  };
}

/** Every service and tool of a fleet, tools at version `v0`. */
export function fleetItems(shape: FleetShape): ConfigItem[] {
  const items: ConfigItem[] = [];
  for (let n = 0; n < shape.services; n++) {
    const id = fleetServiceId(shape, n);
    const service: Record<string, unknown> = { id, 'request-queue': shape.requestQueue(n), 'response-queue': shape.responseQueue, 'config-params': ['op'] };
    if (shape.served) service['plugin'] = { kind: 'module', module: 'builtin:echo' };
    items.push({ type: 'tool-service', key: id, value: JSON.stringify(service) });
    for (let t = 0; t < TOOLS_PER_SERVICE; t++) items.push(fleetTool(shape, n, t, 'v0'));
  }
  return items;
}

/**
 * Write items as `<dir>/<type>/<key>.json` in one pass. A store's put looks for an older file
 * of each key in its type directory first: at 11,000 files that is a second per file.
 */
export async function writeItems(dir: string, items: readonly ConfigItem[]): Promise<void> {
  for (const type of new Set(items.map((item) => item.type))) await mkdir(join(dir, type), { recursive: true });
  const batch = 64;
  for (let i = 0; i < items.length; i += batch) {
    await Promise.all(items.slice(i, i + batch).map((item) => writeFile(join(dir, item.type, `${item.key}.json`), item.value)));
  }
}
