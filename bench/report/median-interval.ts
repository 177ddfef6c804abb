/** Where the median of the rounds' figures lies, with the stated confidence. */
export interface MedianInterval {
  readonly low: number;
  readonly high: number;
  /** The interval's confidence, at least the one asked for. */
  readonly confidence: number;
}

/**
 * A distribution-free confidence interval for the median of `values`: the k-th smallest and
 * k-th largest, with k as large as the confidence allows. Each value falls below the true
 * median with probability 1/2, so the interval misses it with probability 2 P(Bin(n, 1/2) < k),
 * whatever the rounds' distribution (and a host that steals CPU in some rounds gives them no
 * normal one). Undefined when too few values: five at least for 0.9.
 */
export function medianInterval(values: readonly number[], confidence = 0.9): MedianInterval | undefined {
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  let best: MedianInterval | undefined;
  let below = 0; // P(Bin(n, 1/2) <= k - 1), built up term by term
  let term = 0.5 ** n; // P(Bin(n, 1/2) = k - 1), from k = 1
  for (let k = 1; 2 * k <= n; k++) {
    below += term;
    const covered = 1 - 2 * below;
    if (covered < confidence) break;
    best = { low: sorted[k - 1]!, high: sorted[n - k]!, confidence: covered };
    term *= (n - (k - 1)) / k;
  }
  return best;
}
