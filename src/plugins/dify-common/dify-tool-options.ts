import { z } from 'zod';
import type { Tool, ToolService } from '../../catalog/descriptors.js';
import { isSecretRef, secretSetting, type Secrets } from '../../secrets.js';

export const CredentialType = { ApiKey: 'api-key', OAuth2: 'oauth2', Unauthorized: 'unauthorized' } as const;
export type CredentialType = (typeof CredentialType)[keyof typeof CredentialType];

/**
 * Where a Dify tool lives and how to call it. Allowed on the service (`plugin: {kind, ...}`,
 * defaults for its tools) and on each tool (`plugin-options`, which win). Credentials are
 * secret references resolved on the worker, never literal values.
 */
export const difyOptionsSchema = z.strictObject({
  /** `org/plugin` (the X-Plugin-ID header). */
  plugin_id: z
    .string()
    .regex(/^[^/\s]+\/[^/\s]+$/, 'plugin_id must be "org/plugin"')
    .optional(),
  /** `author/name:version@checksum`, for the slim binary's -id. */
  plugin_unique_identifier: z
    .string()
    .regex(/^[^/\s]+\/[^/\s:]+:[^@\s]+(@\S+)?$/, 'plugin_unique_identifier must be "author/name:version@checksum"')
    .optional(),
  /** `org/plugin/provider`, or just the provider's name. */
  provider: z.string().min(1).optional(),
  /** The tool's name in the plugin; defaults to the tool descriptor's name. */
  tool: z.string().min(1).optional(),
  credential_type: z.enum(['api-key', 'oauth2', 'unauthorized']).optional(),
  credentials: z
    .record(z.string(), z.string().refine(isSecretRef, 'a credential must be a secret reference (env:NAME or file:key), never a literal value'))
    .optional(),
});
export type DifyOptions = z.output<typeof difyOptionsSchema>;

/** A tool's options merged with its service's, checked for completeness. */
export interface DifyTarget {
  readonly pluginId: string | undefined;
  readonly uniqueIdentifier: string | undefined;
  /** The provider's own name (last segment of `org/plugin/provider`). */
  readonly provider: string;
  readonly tool: string;
  readonly credentialType: CredentialType;
  /** Credential name -> secret reference. */
  readonly credentialRefs: Readonly<Record<string, string>>;
}

export type TargetResult = { ok: true; target: DifyTarget } | { ok: false; problems: string[] };

function options(value: unknown): DifyOptions {
  const r = difyOptionsSchema.safeParse(value ?? {});
  return r.success ? r.data : {};
}

/** Merge service defaults and tool options; `need` names the id the backend requires. */
export function resolveTarget(service: ToolService, tool: Tool | undefined, need: 'plugin_id' | 'plugin_unique_identifier'): TargetResult {
  const merged = { ...options(service.plugin?.options), ...options(tool?.pluginOptions) };
  const problems: string[] = [];
  const segments = merged.provider?.split('/') ?? [];
  const provider = segments[segments.length - 1];
  // `org/plugin/provider` also names the plugin.
  const pluginId = merged.plugin_id ?? (segments.length === 3 ? `${segments[0]}/${segments[1]}` : undefined);
  if (!provider) problems.push('provider: missing (give "org/plugin/provider" or the provider name)');
  if (segments.length !== 1 && segments.length !== 3) problems.push(`provider: "${merged.provider}" is neither "org/plugin/provider" nor a provider name`);
  if (need === 'plugin_id' && !pluginId) problems.push('plugin_id: missing (give "org/plugin", or provider as "org/plugin/provider")');
  if (need === 'plugin_unique_identifier' && !merged.plugin_unique_identifier)
    problems.push('plugin_unique_identifier: missing ("author/name:version@checksum")');
  const toolName = merged.tool ?? tool?.name;
  if (!toolName) problems.push('tool: missing (the service has no tool descriptor to take the name from)');
  if (problems.length > 0 || !provider || !toolName) return { ok: false, problems };
  const refs = merged.credentials ?? {};
  return {
    ok: true,
    target: {
      pluginId,
      uniqueIdentifier: merged.plugin_unique_identifier,
      provider,
      tool: toolName,
      credentialType: merged.credential_type ?? (Object.keys(refs).length > 0 ? 'api-key' : 'unauthorized'),
      credentialRefs: refs,
    },
  };
}

/** Resolve credential references; names (never values) of the ones that do not resolve. */
export function resolveCredentials(refs: Readonly<Record<string, string>>, secrets: Secrets): { values: Record<string, string>; missing: string[] } {
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, ref] of Object.entries(refs)) {
    const v = secrets.resolve(ref);
    if (v === undefined || v === '') missing.push(`${name} (${secrets.refused(ref) ? `${ref}, not allowed by ${secretSetting(ref)}` : ref})`);
    else values[name] = v;
  }
  return { values, missing };
}

/**
 * Load-time problems of every tool of a service, each naming the descriptor. A service with
 * no tools yet is only checked for its credentials: its tools may be added later.
 */
export function checkTargets(service: ToolService, tools: readonly Tool[], secrets: Secrets, need: 'plugin_id' | 'plugin_unique_identifier'): string[] {
  const problems: string[] = [];
  if (tools.length === 0) {
    const refs = options(service.plugin?.options).credentials ?? {};
    const { missing } = resolveCredentials(refs, secrets);
    if (missing.length > 0) problems.push(`${service.source}: plugin.credentials: cannot resolve ${missing.join(', ')}`);
    return problems;
  }
  for (const tool of tools) {
    const r = resolveTarget(service, tool, need);
    if (!r.ok) {
      problems.push(...r.problems.map((problem) => `${tool.source}: plugin-options.${problem}`));
      continue;
    }
    const { missing } = resolveCredentials(r.target.credentialRefs, secrets);
    if (missing.length > 0) problems.push(`${tool.source}: plugin-options.credentials: cannot resolve ${missing.join(', ')}`);
  }
  return problems;
}
