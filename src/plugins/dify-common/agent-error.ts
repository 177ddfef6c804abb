import {
  InvalidArgumentsError,
  RateLimitedError,
  TimeoutError,
  ToolFailedError,
  UnauthorizedError,
  ConfigError,
  UnknownToolError,
  type ToolwireError,
} from '../../errors.js';
import type { DifyError } from './dify-error.js';
import { redact, truncate } from '../../redact.js';

/** The longest error detail an agent gets; the log has the rest. */
const MAX_DETAIL_CHARS = 2000;

export const CREDENTIALS_TEXT = 'Please check your tool provider credentials';

export interface AgentErrorContext {
  /** The tool's name as the agent knows it. */
  readonly toolName: string;
  /** Values that must not reach the agent (credentials, the daemon key). */
  readonly secrets: readonly string[];
}

const has = (type: string, ...parts: string[]): boolean => parts.some((part) => type.includes(part));

/**
 * Dify's agent-facing text for a tool error, chosen by the innermost error type (the texts
 * Dify's tool engine gives an agent, api/core/tools/tool_engine.py),
 * as a typed error. Beyond Dify: the SDK's "not found" ValueErrors and a missing plugin read
 * as "there is not a tool", an OAuth failure reads as a credentials problem, rate limits are RateLimitedError (retriable), and a daemon
 * timeout is a TimeoutError. The traceback is never part of the text.
 */
/** What an agent reads when the plugin daemon refuses the worker's own key. */
export const DAEMON_KEY_TEXT =
  "the tool worker is misconfigured: the plugin daemon refused the worker's key (not the tool's credentials); the operator must fix the worker's daemon key setting (DIFY_DAEMON_KEY, or DIFY_SLIM_DAEMON_KEY for slim)";

export function agentError(err: DifyError, ctx: AgentErrorContext): ToolwireError {
  const type = err.errorType;
  const detail = truncate(redact(err.message || type, ctx.secrets), MAX_DETAIL_CHARS);
  // No `cause`: the unwrapped error holds the traceback and the raw text, which a log
  // serializer would print; the caller logs a redacted copy instead.

  if (has(type, 'RateLimit') || err.httpStatus === 429) return new RateLimitedError(`tool invoke error: ${detail}`);
  // The worker's own key, not the tool's credentials: an operator's fault, which no retry and
  // no agent can fix. Checked before the credentials case, whose words would blame the tool.
  if (type === 'PluginDaemonUnauthorizedError') return new ConfigError([DAEMON_KEY_TEXT], { retriable: false });
  if (has(type, 'Credential', 'Authorization', 'Unauthorized', 'OAuth')) return new UnauthorizedError(CREDENTIALS_TEXT);
  if (has(type, 'ToolNotFound', 'ProviderNotFound', 'PluginNotFound') || (type === 'ValueError' && /not found/i.test(err.message))) {
    return new UnknownToolError(`there is not a tool named ${ctx.toolName}`);
  }
  if (err.httpStatus === 400 || has(type, 'BadRequest', 'Validate', 'Validation')) {
    return new InvalidArgumentsError(`tool parameters validation error: ${detail}, please check your tool parameters`);
  }
  if (/killed by timeout/i.test(err.message)) return new TimeoutError(`tool invoke error: ${detail}`);
  return new ToolFailedError(`tool invoke error: ${detail}`);
}
