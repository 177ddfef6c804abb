import { readFile } from 'node:fs/promises';

/** Allocators that serve pulsar-client better than glibc's malloc, as their libraries appear in a memory map. */
const FAST_ALLOCATOR = /\blib(jemalloc|tcmalloc(?:_minimal)?|mimalloc)\b[\w.-]*\.so/;

/** The faster allocator a process's memory map (`/proc/PID/maps`) shows, or undefined. */
export function fastAllocatorIn(maps: string): string | undefined {
  return FAST_ALLOCATOR.exec(maps)?.[1];
}

/**
 * True when this process runs on glibc's malloc on Linux, where pulsar-client's many small
 * allocations a message cost about a sixth of a native worker's throughput
 * (docs/benchmarks-rationale.md); false when a faster allocator is preloaded, or where there
 * is no /proc to tell.
 */
export async function onSlowAllocator(readMaps: () => Promise<string> = () => readFile('/proc/self/maps', 'utf8')): Promise<boolean> {
  const maps = await readMaps().catch(() => undefined);
  return maps !== undefined && fastAllocatorIn(maps) === undefined;
}
