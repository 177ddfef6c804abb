/** What one drill found. Drills assert on counts, never on time; times are reported. */
export interface DrillResult {
  readonly drill: string;
  readonly form: 'short' | 'long';
  /** Every count the drill's pass/fail rule looks at, and some it only reports. */
  readonly counts: Readonly<Record<string, number>>;
  /** Figures reported but never asserted (latencies, ratios, durations). */
  readonly figures: Readonly<Record<string, number>>;
  /** The rule, in words, and whether it held. */
  readonly rule: string;
  readonly passed: boolean;
  readonly notes: readonly string[];
  readonly durationMs: number;
}

export type DrillForm = 'short' | 'long';

/** Build a result; `passed` is computed by the drill from its counts. */
export function drillResult(
  drill: string,
  form: DrillForm,
  startedAt: number,
  rule: string,
  passed: boolean,
  counts: Record<string, number>,
  figures: Record<string, number> = {},
  notes: string[] = [],
): DrillResult {
  return { drill, form, counts, figures, rule, passed, notes, durationMs: Date.now() - startedAt };
}
