import { describe, expect, it } from 'vitest';
import { fastAllocatorIn, onSlowAllocator } from '../../../src/transport/native-allocator.js';

const line = (path: string): string => `7f1c2a000000-7f1c2a02a000 r-xp 00000000 fe:00 1234 ${path}\n`;
const GLIBC = line('/usr/lib/x86_64-linux-gnu/libc.so.6') + line('/usr/local/lib/libpulsar.so');

describe('native allocator', () => {
  it('names a preloaded jemalloc, tcmalloc or mimalloc, and nothing on glibc alone', () => {
    expect(fastAllocatorIn(GLIBC + line('/usr/lib/x86_64-linux-gnu/libjemalloc.so.2'))).toBe('jemalloc');
    expect(fastAllocatorIn(GLIBC + line('/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.10'))).toBe('tcmalloc_minimal');
    expect(fastAllocatorIn(GLIBC + line('/opt/lib/libmimalloc.so.2.1'))).toBe('mimalloc');
    expect(fastAllocatorIn(GLIBC)).toBeUndefined();
  });

  it('says slow only where it could read a map that shows no faster allocator', async () => {
    await expect(onSlowAllocator(async () => GLIBC)).resolves.toBe(true);
    await expect(onSlowAllocator(async () => GLIBC + line('/usr/lib/libjemalloc.so.2'))).resolves.toBe(false);
    await expect(onSlowAllocator(() => Promise.reject(new Error('ENOENT: no /proc here')))).resolves.toBe(false);
  });
});
