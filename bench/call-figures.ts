/** Latency and throughput of one kind of call, measured in-process (the mcp and openapi benches). */
export interface CallBenchOptions {
  /** Calls one after another, for latency. */
  readonly sequential: number;
  /** Calls in flight at once, for throughput. */
  readonly concurrency: number;
  /** Calls made at that concurrency. */
  readonly concurrentCalls: number;
  /** Direct and through-toolwire measured this many times each, alternated. */
  readonly rounds: number;
}

export interface Figures {
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly callsPerSec: number;
}

const quantile = (xs: number[], p = 0.5) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

/** 50 warm-up calls, `sequential` timed one by one, then `concurrentCalls` at `concurrency`. */
export async function measureCalls(call: (n: number) => Promise<void>, o: CallBenchOptions): Promise<Figures> {
  for (let n = 0; n < 50; n++) await call(n);
  const lat: number[] = [];
  for (let n = 0; n < o.sequential; n++) {
    const t = performance.now();
    await call(n);
    lat.push(performance.now() - t);
  }
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.concurrentCalls) await call(next++);
    }),
  );
  return { p50Ms: quantile(lat), p90Ms: quantile(lat, 0.9), callsPerSec: (o.concurrentCalls / (performance.now() - t0)) * 1000 };
}

/** The best round of each figure (the least disturbed by the neighbours). */
export function bestRound(rounds: Figures[]): Figures {
  return {
    p50Ms: Math.min(...rounds.map((r) => r.p50Ms)),
    p90Ms: Math.min(...rounds.map((r) => r.p90Ms)),
    callsPerSec: Math.max(...rounds.map((r) => r.callsPerSec)),
  };
}

/** Figures rounded for a report line. */
export function roundedFigures(f: Figures): Figures {
  const r = (x: number) => Math.round(x * 100) / 100;
  return { p50Ms: r(f.p50Ms), p90Ms: r(f.p90Ms), callsPerSec: Math.round(f.callsPerSec) };
}
