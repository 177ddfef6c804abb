/** Bounds of a whole-number setting, both included. */
export interface WholeNumberBounds {
  readonly min?: number;
  readonly max?: number;
}

/**
 * A setting's whole number, for the core's variables (settings.ts) and every plugin kind's
 * (SettingsReader.int) alike. Digits only: Number() would read `1e3` as 1000, `0x10` as 16
 * and a blank as 0 (TOOLWIRE_TIMEOUT_MS= timing every call out), so they, a sign, a point and
 * spaces are refused. The problem leaves the variable's name to the caller, which puts it first.
 */
export function parseWholeNumber(text: string, bounds: WholeNumberBounds = {}): { value: number } | { problem: string } {
  const got = `got ${JSON.stringify(text)}`;
  if (!/^\d+$/.test(text)) return { problem: `must be a whole number (digits only), ${got}` };
  const value = Number(text);
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = bounds;
  if (value < min) return { problem: `must be a whole number of at least ${min}, ${got}` };
  if (value > max) return { problem: `must be a whole number of at most ${max}, ${got}` };
  return { value };
}
