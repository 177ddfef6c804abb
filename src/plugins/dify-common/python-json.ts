import { isLosslessNumber } from './plugin-json.js';

/**
 * JSON text the way Python's `json.dumps(value, ensure_ascii=False)` writes it (", " and ": "
 * separators). Dify's agent builds its observation with it, and a plugin that sends the same
 * data as text usually used it too: matching it lets duplicates be recognised.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  // A number a double cannot hold, as the plugin wrote it (plugin-json.ts).
  if (isLosslessNumber(value)) return value.toString();
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, member]) => member !== undefined);
    if (entries.length === 0) return '{}';
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}: ${pythonJsonDumps(member)}`).join(', ')}}`;
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : 'null';
  return JSON.stringify(value) ?? 'null';
}
