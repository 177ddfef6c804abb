import type { Logger } from 'pino';
import type { ToolService } from '../../catalog/descriptors.js';
import { ToolFailedError, UnauthorizedError } from '../../errors.js';
import type { Secrets } from '../../secrets.js';
import type { ToolCall } from '../plugin.js';
import { CREDENTIALS_TEXT } from './agent-error.js';
import { resolveCredentials, resolveTarget, type DifyTarget } from './dify-tool-options.js';
import { toolParameters } from './tool-parameters.js';

/** The invoke payload's `data`, for the daemon's body and for slim's stdin alike. */
export interface ToolInvokeData {
  readonly provider: string;
  readonly tool: string;
  readonly credentials: Readonly<Record<string, string>>;
  readonly credential_type: string;
  readonly tool_parameters: Readonly<Record<string, unknown>>;
}

export interface DifyInvocation {
  readonly target: DifyTarget;
  readonly toolName: string;
  readonly log: Logger;
  /** Resolved credential values (never to be logged or answered). */
  readonly credentials: Readonly<Record<string, string>>;
  readonly data: ToolInvokeData;
}

/**
 * What both Dify backends do before they call anything: find the plugin tool, resolve the
 * worker's credentials for it, and build the invoke `data`. Failures are typed for the agent.
 */
export function prepareDifyInvocation(
  service: ToolService,
  call: ToolCall,
  secrets: Secrets,
  need: 'plugin_id' | 'plugin_unique_identifier',
  logFields: (target: DifyTarget) => Record<string, unknown>,
): DifyInvocation {
  const resolved = resolveTarget(service, call.tool, need);
  const toolName = call.tool?.name ?? 'unknown';
  if (!resolved.ok) {
    call.log.error({ problems: resolved.problems }, 'dify tool is not fully configured');
    throw new ToolFailedError(`tool invoke error: tool ${toolName} is not fully configured on this worker`);
  }
  const target = resolved.target;
  const log = call.log.child(logFields(target));
  const creds = resolveCredentials(target.credentialRefs, secrets);
  if (creds.missing.length > 0) {
    log.error({ missing: creds.missing }, 'tool credentials do not resolve on this worker');
    throw new UnauthorizedError(CREDENTIALS_TEXT);
  }
  return {
    target,
    toolName,
    log,
    credentials: creds.values,
    data: {
      provider: target.provider,
      tool: target.tool,
      credentials: creds.values,
      credential_type: target.credentialType,
      tool_parameters: toolParameters(call.tool, call.arguments, call.config),
    },
  };
}
