import { randomUUID } from 'node:crypto';

/**
 * A module's revision is `run --watch`'s, never a config writer's: each new one imports the
 * module afresh (its top-level code runs again, the old copy stays in memory) and type checks
 * a .ts one. So the watch source stamps a value only this process can make: a random prefix
 * of its own and a count. A descriptor that carries any other value is refused.
 */
const PREFIX = `watch-${randomUUID()}.`;

/** The revision `run --watch` stamps on a module whose directory changed `count` times. */
export function watchRevision(count: number): string {
  return `${PREFIX}${count}`;
}

/** Whether `revision` was stamped by this process's watch source. */
export function isWatchRevision(revision: string): boolean {
  return revision.startsWith(PREFIX) && /^\d+$/.test(revision.slice(PREFIX.length));
}
