import { z } from 'zod';

/**
 * TrustGraph's config service on the wire (trustgraph-base 2.11.1, schema/config.py): plain
 * JSON of its dataclasses, requests and responses correlated by the `id` property. Values are
 * JSON text. The version is one counter for every type and workspace.
 */
export const CONFIG_REQUEST_TOPIC = 'non-persistent://tg/request/config';
export const CONFIG_RESPONSE_TOPIC = 'non-persistent://tg/response/config';
/** Pokes: the version and which types changed in which workspaces; never the values. */
export const CONFIG_NOTIFY_TOPIC = 'non-persistent://tg/notify/config';

/** Where the config service listens, answers and pokes (TrustGraph's three config queues). */
export interface ConfigQueues {
  readonly request: string;
  readonly response: string;
  readonly push: string;
}

export const DEFAULT_CONFIG_QUEUES: ConfigQueues = { request: CONFIG_REQUEST_TOPIC, response: CONFIG_RESPONSE_TOPIC, push: CONFIG_NOTIFY_TOPIC };

export type ConfigOperation = 'get' | 'list' | 'getvalues' | 'put' | 'delete' | 'config';

export interface ConfigRequest {
  readonly operation: ConfigOperation;
  readonly workspace: string;
  readonly keys?: readonly { readonly type: string; readonly key: string }[];
  readonly type?: string;
  readonly values?: readonly { readonly type: string; readonly key: string; readonly value: string }[];
}

const errorSchema = z.object({ type: z.string().nullish(), message: z.string().nullish() }).nullish();

export const configResponseSchema = z.object({
  version: z.number().int().nullish(),
  values: z.array(z.object({ type: z.string().nullish(), key: z.string(), value: z.string().nullish(), workspace: z.string().nullish() })).nullish(),
  directory: z.array(z.string()).nullish(),
  config: z.record(z.string(), z.record(z.string(), z.string())).nullish(),
  // The gateway reports its own failures as a bare string.
  error: z.union([errorSchema, z.string()]),
});
export type ConfigResponse = z.infer<typeof configResponseSchema>;

export const configPushSchema = z.object({
  version: z.number().int(),
  changes: z.record(z.string(), z.array(z.string())).nullish(),
});
export type ConfigPush = z.infer<typeof configPushSchema>;

/** The error of a response as one line, or undefined when it succeeded. */
export function configResponseError(response: ConfigResponse): string | undefined {
  if (!response.error) return undefined;
  if (typeof response.error === 'string') return response.error;
  if (!response.error.type && !response.error.message) return undefined;
  return `${response.error.type ?? 'error'}: ${response.error.message ?? ''}`;
}

/** Anything that carries a config request to the service and brings its response back. */
export interface ConfigApi {
  /** Where requests go, for messages (never with credentials). */
  readonly description: string;
  request(req: ConfigRequest, signal?: AbortSignal): Promise<ConfigResponse>;
  close(): Promise<void>;
}
