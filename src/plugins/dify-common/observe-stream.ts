import type { Logger } from 'pino';
import { ToolFailedError, type ToolwireError } from '../../errors.js';
import { agentError } from './agent-error.js';
import type { BlobLimits } from './blob-merger.js';
import type { BlobSink } from '../blob-sink.js';
import type { DifyError } from './dify-error.js';
import { parseInvokeMessage } from './invoke-message.js';
import { ObservationBuilder } from './observation-builder.js';
import { redact } from '../../redact.js';

/** What a backend's transport yields: invoke messages, or an error that ends the call. */
export type StreamItem = { readonly kind: 'message'; readonly value: unknown } | { readonly kind: 'error'; readonly error: DifyError };

export interface ObserveOptions {
  readonly log: Logger;
  readonly blobSink: BlobSink;
  readonly signal: AbortSignal;
  readonly toolName: string;
  /** Values never to show: resolved credentials and the daemon key. */
  readonly secrets: readonly string[];
  readonly limits?: BlobLimits;
}

/**
 * Log a Dify error in full (traceback included, secrets masked) and return the typed error
 * whose message the agent reads.
 */
export function reportDifyError(error: DifyError, opts: Pick<ObserveOptions, 'log' | 'toolName' | 'secrets'>): ToolwireError {
  const fields = {
    errorType: error.errorType,
    chain: error.chain,
    code: error.code,
    httpStatus: error.httpStatus,
    detail: redact(error.message, opts.secrets),
    traceback: error.traceback === undefined ? undefined : redact(error.traceback, opts.secrets),
  };
  if (error.errorType === 'PluginDaemonUnauthorizedError') opts.log.error(fields, 'the plugin daemon rejected the worker key');
  // Slim's codes are strings too (PLUGIN_EXEC_ERROR): only the daemon's unknown-route answer is this.
  else if (error.errorType === 'PluginDaemonRouteNotFound')
    opts.log.error(fields, 'the plugin daemon does not know the route; check the daemon URL and version');
  else opts.log.warn(fields, 'dify tool failed');
  return agentError(error, { toolName: opts.toolName, secrets: opts.secrets });
}

/** Turn a backend's items into observation text, chunk by chunk, as they arrive. */
export async function* observe(items: AsyncIterable<StreamItem>, opts: ObserveOptions): AsyncGenerator<string> {
  const builder = new ObservationBuilder({ log: opts.log, blobSink: opts.blobSink, signal: opts.signal, limits: opts.limits, secrets: opts.secrets });
  for await (const item of items) {
    if (item.kind === 'error') throw reportDifyError(item.error, opts);
    const parsed = parseInvokeMessage(item.value);
    if (!parsed.ok) {
      opts.log.warn({ problem: parsed.problem }, 'unreadable invoke message');
      throw new ToolFailedError(`tool invoke error: the tool sent a message that cannot be read (${parsed.problem})`);
    }
    for (const chunk of await builder.accept(parsed.message)) yield chunk;
  }
  for (const chunk of builder.finish()) yield chunk;
}
