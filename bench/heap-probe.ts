/**
 * Loaded into a benchmarked Node process with `--import`, beside `--expose-gc` (the
 * watch-reload bench sets NODE_OPTIONS): when its parent asks over the IPC channel, it
 * collects garbage and answers with the heap then in use and the RSS. What is still live
 * after a full collection is what a process keeps; RSS alone also counts what V8 has not
 * yet bothered to collect.
 */
export const HEAP_ASK = 'heap-probe:ask';

export interface HeapAnswer {
  readonly type: 'heap-probe:answer';
  readonly heapUsedBytes: number;
  readonly rssBytes: number;
}

const collect = (globalThis as { gc?: () => void }).gc;

if (typeof process.send === 'function') {
  process.channel?.unref();
  process.on('message', (m: unknown) => {
    if ((m as { type?: unknown } | null)?.type !== HEAP_ASK) return;
    collect?.();
    collect?.();
    const mem = process.memoryUsage();
    const answer: HeapAnswer = { type: 'heap-probe:answer', heapUsedBytes: mem.heapUsed, rssBytes: mem.rss };
    process.send?.(answer);
  });
}
