import { createHash } from 'node:crypto';
import { ConfigType } from '../catalog/descriptors.js';
import type { ConfigEntry } from './config-store.js';

/** The descriptor types a worker reads; a change to either re-reads both. */
export const DESCRIPTOR_TYPES: readonly string[] = [ConfigType.ToolService, ConfigType.Tool];

/** What a source held at one moment. */
export interface ConfigSnapshot {
  /** The source's own version (TrustGraph's counter, a directory's content hash). */
  readonly version: string;
  readonly entries: readonly ConfigEntry[];
}

/** Where a worker's descriptors come from, read whole and watched for changes. */
export interface ConfigSource {
  /** For logs and /readyz: what and where, never a credential. */
  readonly description: string;
  /**
   * Start noticing changes. `changed` may be called for nothing (a poll, a change of another
   * type); the reader compares what it reads. Called before the first read, so that a change
   * made between the two is not missed.
   */
  watch(changed: () => void, signal?: AbortSignal): Promise<void>;
  read(signal?: AbortSignal): Promise<ConfigSnapshot>;
  close(): Promise<void>;
}

/**
 * Each entry's digest, kept with the entry: a source hands back the same entry for an item
 * unchanged (directory-store.ts, trustgraph-store.ts), so that a read of 11,000 descriptors
 * with one changed hashes one again, then 11,000 digests at once.
 */
const digests = new WeakMap<ConfigEntry, Buffer>();

function digestOf(e: ConfigEntry): Buffer {
  let digest = digests.get(e);
  if (digest === undefined) {
    digest = createHash('sha256')
      .update(JSON.stringify([e.type, e.key, e.value ?? null, e.error ?? null]))
      .digest();
    digests.set(e, digest);
  }
  return digest;
}

/** The content of entries as a short hash: equal descriptors give equal fingerprints. */
export function fingerprint(entries: readonly ConfigEntry[]): string {
  const h = createHash('sha256');
  const sorted = [...entries].sort((left, right) =>
    left.type === right.type ? (left.key < right.key ? -1 : left.key > right.key ? 1 : 0) : left.type < right.type ? -1 : 1,
  );
  h.update(Buffer.concat(sorted.map(digestOf)));
  return h.digest('hex').slice(0, 12);
}
