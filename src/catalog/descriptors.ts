import { z } from 'zod';
import { parameterSchema, type Parameter } from '../arguments/parameter.js';

/** How a service answers: one message (what today's agents read) or a stream of chunks. */
export const StreamMode = { Single: 'single', Stream: 'stream' } as const;
export type StreamMode = (typeof StreamMode)[keyof typeof StreamMode];

// An agent's `__proto__` key is dropped on decoding (envelope/agent-json.ts), so no request could carry that value.
const configParamName = z
  .string()
  .min(1)
  .refine((name) => name !== '__proto__', 'a config-param cannot be named __proto__');

// A plain string is a name, not required. One object schema (not a union) so a problem names its field.
const configParamSchema = z
  .preprocess((value) => (typeof value === 'string' ? { name: value } : value), z.looseObject({ name: configParamName, required: z.boolean().default(false) }))
  .transform((param) => ({ name: param.name, required: param.required }));

const positiveInt = z.number().int().positive();

/**
 * A tool-service descriptor (config type `tool-service`): TrustGraph's keys, plus ours:
 * `plugin` (what implements it), `concurrency`, `timeout-ms`, `stream`, `subscription`,
 * `max-redeliveries`. Unknown keys are kept.
 */
export const toolServiceSchema = z.looseObject({
  id: z.string().min(1),
  'request-queue': z.string().min(1),
  'response-queue': z.string().min(1),
  'config-params': z.array(configParamSchema).default([]),
  plugin: z.looseObject({ kind: z.string().min(1) }).optional(),
  concurrency: positiveInt.optional(),
  'timeout-ms': positiveInt.optional(),
  stream: z.enum(['single', 'stream']).default('single'),
  subscription: z.string().min(1).optional(),
  'max-redeliveries': z.number().int().nonnegative().optional(),
});

/**
 * `"arguments": "from-module"`: the tool's arguments are its module's zod schema, read when
 * the worker loads the module (and again on each reload), not written in the descriptor.
 */
export const ARGUMENTS_FROM_MODULE = 'from-module';

const parameterList = z.array(parameterSchema);

// Not a z.union: its failure is one "Invalid input", where each option's own says which parameter and field.
const toolArguments = z.unknown().transform((value, ctx): Parameter[] | typeof ARGUMENTS_FROM_MODULE => {
  if (value === ARGUMENTS_FROM_MODULE) return ARGUMENTS_FROM_MODULE;
  if (typeof value === 'string') {
    ctx.addIssue({ code: 'custom', message: `is a list of parameters, or "${ARGUMENTS_FROM_MODULE}"` });
    return z.NEVER;
  }
  const parsed = parameterList.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});

/**
 * A tool descriptor (config type `tool`). Config values are top-level keys named after the
 * service's config-params, so the schema keeps unknown keys. Ours: `runtime-parameters`
 * (values for hidden parameters), `plugin-options`, `timeout-ms`, and `arguments` as
 * ARGUMENTS_FROM_MODULE.
 */
export const toolSchema = z.looseObject({
  type: z.string().default('tool-service'),
  name: z.string().min(1),
  description: z.string().default(''),
  service: z.string().min(1),
  arguments: toolArguments.default([]),
  group: z.array(z.string()).optional(),
  state: z.string().optional(),
  'applicable-states': z.array(z.string()).optional(),
  'runtime-parameters': z.record(z.string(), z.unknown()).default({}),
  'plugin-options': z.record(z.string(), z.unknown()).optional(),
  'timeout-ms': positiveInt.optional(),
});

/**
 * The Shared subscription a service consumes its request topic with unless its descriptor
 * names one: TrustGraph's DynamicToolService's name (`<id>-request`), so a toolwire worker
 * and a Python service of the same id share the requests.
 */
export function defaultSubscription(serviceId: string): string {
  return `${serviceId}-request`;
}

/** A validated tool-service, with full topic names. */
export interface ToolService {
  readonly id: string;
  readonly requestQueue: string;
  readonly responseQueue: string;
  readonly configParams: readonly { readonly name: string; readonly required: boolean }[];
  readonly plugin: { readonly kind: string; readonly options: unknown } | undefined;
  readonly concurrency: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly stream: StreamMode;
  readonly subscription: string;
  readonly maxRedeliveries: number | undefined;
  /** The descriptor as written, unknown keys included. */
  readonly raw: Readonly<Record<string, unknown>>;
  readonly source: string;
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly service: string;
  /** This tool's values for its service's config-params. */
  readonly config: Readonly<Record<string, unknown>>;
  readonly parameters: readonly Parameter[];
  /** The descriptor said ARGUMENTS_FROM_MODULE: `parameters` are what the service's plugin derived when it loaded the module (none before). */
  readonly argumentsFromModule?: true;
  readonly runtimeParameters: Readonly<Record<string, unknown>>;
  readonly pluginOptions: unknown;
  readonly timeoutMs: number | undefined;
  readonly raw: Readonly<Record<string, unknown>>;
  readonly source: string;
}

export const ConfigType = { ToolService: 'tool-service', Tool: 'tool' } as const;
export type ConfigType = (typeof ConfigType)[keyof typeof ConfigType];
