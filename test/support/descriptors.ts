import type { z } from 'zod';
import type { toolSchema, toolServiceSchema } from '../../src/catalog/descriptors.js';

/** A tool-service descriptor as the catalog reads it (its zod input: defaults may be left out). */
export type ServiceDescriptor = z.input<typeof toolServiceSchema>;
/** A tool descriptor as the catalog reads it. */
export type ToolDescriptor = z.input<typeof toolSchema>;

export interface ServiceShape {
  /** The request topic's kind; persistent unless said (TrustGraph's flow default). */
  readonly requests?: 'persistent' | 'non-persistent';
  /** The response topic's kind; non-persistent unless said. Persistent keeps answers sent while the agent is away. */
  readonly responses?: 'persistent' | 'non-persistent';
  /** Added to both topic names, so runs on one broker do not meet. */
  readonly tag?: string;
}

/**
 * A tool-service descriptor whose topics are named after its id: requests on `tg/flow` (or
 * `tg/request` when non-persistent), answers on `tg/response` (non-persistent unless
 * `shape.responses` says), as a TrustGraph flow lays them out. `fields` adds or overrides any key.
 */
export function serviceDescriptor(id: string, fields: Partial<ServiceDescriptor> = {}, shape: ServiceShape = {}): ServiceDescriptor {
  const name = shape.tag === undefined ? id : `${id}-${shape.tag}`;
  const requestQueue = shape.requests === 'non-persistent' ? `non-persistent://tg/request/${name}` : `persistent://tg/flow/${name}-request`;
  const responseQueue = `${shape.responses ?? 'non-persistent'}://tg/response/${name}`;
  return { id, 'request-queue': requestQueue, 'response-queue': responseQueue, ...fields };
}

/** A tool descriptor of `service`; `fields` adds arguments, config values and the rest. */
export function toolDescriptor(name: string, service: string, fields: Partial<ToolDescriptor> = {}): ToolDescriptor {
  return { name, service, description: `the ${name} tool`, ...fields };
}
