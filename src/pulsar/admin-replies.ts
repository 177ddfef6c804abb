import { z } from 'zod';
import { firstIssue } from '../errors.js';
import { PulsarAdminError } from './admin-error.js';

/**
 * The shapes of the admin API's answers that toolwire reads, checked where they arrive: a
 * proxy's HTML page or another version's shape is a clear error naming the call, not a
 * `TypeError` three calls later. Unknown fields are dropped; only what is read is required.
 */
export const stringList = z.array(z.string());

export const tenantInfoReply = z.object({
  adminRoles: stringList.default([]),
  allowedClusters: stringList.default([]),
});

export const retentionReply = z.object({
  retentionTimeInMinutes: z.number(),
  retentionSizeInMB: z.number(),
});

const subscriptionStats = z.object({
  msgBacklog: z.number(),
  msgOutCounter: z.number().optional(),
  type: z.string().optional(),
  consumers: z.array(z.unknown()).default([]),
});

/** The parts of a topic's stats that toolwire reads. */
export const topicStatsReply = z.object({
  msgInCounter: z.number(),
  subscriptions: z.record(z.string(), subscriptionStats).default({}),
});
export type TopicStats = z.infer<typeof topicStatsReply>;

/** Pulsar's LookupData: the owner's binary-protocol and web URLs; the TLS ones only where it has TLS ports. */
export const topicLookupReply = z.object({
  brokerUrl: z.string().optional(),
  brokerUrlTls: z.string().optional(),
  httpUrl: z.string().optional(),
  httpUrlTls: z.string().optional(),
});
export type TopicLookup = z.infer<typeof topicLookupReply>;

/** The admin API's error body: `{"reason": "..."}`. */
export const errorReply = z.object({ reason: z.string() });

/** `body` read as `schema`, or a non-retriable error naming the call and what was wrong. */
export function adminReply<S extends z.ZodType>(schema: S, body: unknown, call: string): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new PulsarAdminError(`${call} answered an unexpected body ${firstIssue(parsed.error)}; it was ${preview(body)}`, { call }, { retriable: false });
}

function preview(value: unknown): string {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s === undefined ? String(value) : s.slice(0, 200);
}
