import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { PERF_FREQUENCY_HZ, microsPerRequest, perfStacks, sourceArea, summarizeStacks } from '../../../bench/perf-profile.js';
import { perfTable } from '../../../bench/report/perf-table.js';

/**
 * Stacks copied unchanged from `perf script -F tid,ip,sym,dso`: six of a real bench run
 * (native client, non-persistent topics; toolwire's worker was process 27745, the bench's own
 * process 27729, and 27735 a V8 helper thread), then one of a `node -e` loop, process 7344,
 * whose shorter id perf pads with a space.
 */
const EXCERPT = new URL('../../fixtures/perf/perf-script-excerpt.txt', import.meta.url);

const lines = () => createInterface({ input: createReadStream(EXCERPT) });

describe('perf profiles', () => {
  it('reads every stack of perf script, frames from the leaf up', async () => {
    const stacks = [];
    for await (const s of perfStacks(lines())) stacks.push(s);
    expect(stacks.map((s) => s.tid)).toEqual([27745, 27745, 27745, 27745, 27735, 27729, 7344]);
    expect(stacks[0]!.frames[0]).toEqual({ sym: 'Producer::Send', dso: '/work/main/node_modules/pulsar-client/lib/binding/pulsar.node' });
    expect(stacks[0]!.frames.at(-1)!.sym).toBe('__libc_start_call_main');
    // A symbol with spaces and parentheses of its own keeps them; only the last (...) is the object.
    expect(stacks[3]!.frames[2]!.sym).toMatch(/^std::_Hashtable<node::CleanupQueue::CleanupHookCallback, .*>::_M_erase$/);
  });

  it("counts the main thread's samples by the first telling frame from the leaf up, and the other threads together", async () => {
    const worker = await summarizeStacks(perfStacks(lines()), 27745);
    expect(worker.mainThread).toEqual({
      'pulsar-client (native)': 1,
      'garbage collector': 1,
      // JSON.stringify's native code counts for the JavaScript that called it.
      'js toolwire envelope/response.js': 1,
      'event loop, kernel and the rest': 1,
    });
    expect(worker.otherThreads).toBe(3);
    // A CommonJS dependency's script is a path, and a getter's name has a space.
    const bench = await summarizeStacks(perfStacks(lines()), 27729);
    expect(bench.mainThread).toEqual({ 'js hdr-histogram-js': 1 });
    const loop = await summarizeStacks(perfStacks(lines()), 7344);
    expect(loop.mainThread).toEqual({ 'js [eval]': 1 });
  });

  it('names a script by its package, or by its place in toolwire or the bench', () => {
    expect(sourceArea('file:///r/dist/worker/request-handler.js')).toBe('toolwire worker/request-handler.js');
    expect(sourceArea('file:///r/build/src/envelope/response.js')).toBe('toolwire envelope/response.js');
    expect(sourceArea('file:///r/build/bench/floor-responder.js')).toBe('bench floor-responder.js');
    expect(sourceArea('file:///r/node_modules/p-limit/index.js')).toBe('p-limit');
    expect(sourceArea('/r/node_modules/@opentelemetry/api/build/src/api/context.js')).toBe('@opentelemetry/api');
    expect(sourceArea('node:internal/timers')).toBe('node internals');
  });

  it('reports µs a request by area for each scenario, its rounds pooled', () => {
    const perf = (main: Record<string, number>, other: number) => ({ frequencyHz: 1000, mainThread: main, otherThreads: other });
    const table = perfTable([
      // 1,000 samples at 1 kHz over 1,000 answers is 1 ms, 1,000 µs, a request.
      { id: 'floor-single', perf: perf({ 'pulsar-client (native)': 600, 'js bench floor-responder.js': 400 }, 500), answered: 1000 },
      { id: 'toolwire-single', perf: perf({ 'pulsar-client (native)': 300, 'js toolwire worker/request-handler.js': 300 }, 100), answered: 500 },
      { id: 'toolwire-single-r2', perf: perf({ 'pulsar-client (native)': 300, 'js toolwire worker/request-handler.js': 100 }, 100), answered: 500 },
      { id: 'no-profile', perf: undefined, answered: 100 },
    ]);
    const rows = table.filter((l) => l.startsWith('| '));
    expect(rows[0]).toBe('| area | floor-single | toolwire-single |');
    expect(rows).toContain('| **main thread, all** | 1000.0 | 1000.0 |');
    expect(rows).toContain('| pulsar-client (native) | 600.0 | 600.0 |');
    expect(rows).toContain('| js toolwire worker/request-handler.js | 0.0 | 400.0 |');
    expect(rows).toContain('| js bench floor-responder.js | 400.0 | 0.0 |');
    expect(rows.at(-1)).toBe("| **the process's other threads** | 500.0 | 200.0 |");
    // The costliest area first.
    expect(rows.indexOf('| pulsar-client (native) | 600.0 | 600.0 |')).toBeLessThan(rows.indexOf('| js bench floor-responder.js | 400.0 | 0.0 |'));
    expect(perfTable([{ id: 'x', perf: undefined, answered: 1 }])).toEqual([]);
  });

  it('turns samples into µs a request at the sampling frequency', () => {
    expect(microsPerRequest(PERF_FREQUENCY_HZ, PERF_FREQUENCY_HZ, 1_000)).toBeCloseTo(1_000);
    expect(microsPerRequest(5, 1000, 0)).toBeNaN();
  });
});
