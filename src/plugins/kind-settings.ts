/** Environment variables by name, as a plugin reads them (`PluginContext.settings`). */
export type SettingValues = Readonly<Record<string, string | undefined>>;

/**
 * The worker settings a plugin kind reads, declared beside the kind (its `*-kind.ts`) so that
 * the core reads a new kind's variables without knowing it: `readSettings` hands plugins the
 * variables some declaration names, and masks the declared secrets in the logs. The kind's
 * reader (`<kind>/settings.ts`, with `SettingsReader`) parses them when the kind is used.
 */
export interface KindSettings {
  /** Variables whose names start so are the kind's (`DIFY_`, `MCP_`...). */
  readonly prefixes: readonly string[];
  /** Variables of other names the kind reads; the environment given, for names one of its settings lists. */
  readonly names?: (env: SettingValues) => readonly string[];
  /** The settings that hold a secret: given as a value rather than a reference, it is masked in the logs. */
  readonly secrets: readonly string[];
}

/** The variables of `env` the declarations name, as they are. */
export function declaredValues(env: SettingValues, declarations: readonly KindSettings[]): Record<string, string | undefined> {
  const prefixes = declarations.flatMap((d) => d.prefixes);
  const names = new Set(declarations.flatMap((d) => d.names?.(env) ?? []));
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) if (names.has(k) || prefixes.some((prefix) => k.startsWith(prefix))) out[k] = v;
  return out;
}

/** The names of the declared secrets, each once. */
export function declaredSecrets(declarations: readonly KindSettings[]): string[] {
  return [...new Set(declarations.flatMap((d) => d.secrets))];
}
