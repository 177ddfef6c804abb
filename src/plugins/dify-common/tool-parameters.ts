import type { Tool } from '../../catalog/descriptors.js';
import { toPluginFile } from '../../arguments/plugin-file.js';

/**
 * The `tool_parameters` a plugin receives: the prepared arguments, with declared file
 * parameters turned into the file objects Dify's SDK reads. Config-param values that only
 * route the request to this tool (not declared as parameters) are left out. Always an
 * object, never absent: a missing map reaches the plugin as null and fails its validation.
 */
export function toolParameters(
  tool: Tool | undefined,
  args: Readonly<Record<string, unknown>>,
  config: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  const declared = new Map((tool?.parameters ?? []).map((parameter) => [parameter.name, parameter]));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (k in config && !declared.has(k) && args[k] === config[k]) continue;
    out[k] = v;
  }
  for (const p of declared.values()) {
    const v = out[p.name];
    if (v === undefined || v === null) continue;
    if (p.type === 'file') out[p.name] = toPluginFile(v);
    else if ((p.type === 'files' || p.type === 'system-files') && Array.isArray(v)) out[p.name] = v.map(toPluginFile);
  }
  return out;
}
