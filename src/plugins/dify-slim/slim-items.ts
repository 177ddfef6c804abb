import type { Logger } from 'pino';
import { ToolFailedError, UnavailableError } from '../../errors.js';
import { unwrapDifyError, unwrapErrorMessage, type DifyError } from '../dify-common/dify-error.js';
import type { StreamItem } from '../dify-common/observe-stream.js';
import { redact, truncate } from '../../redact.js';
import type { SlimMode } from './settings.js';
import type { SlimOutput } from './slim-process.js';
import { isPlainObject, jsonText } from '../../plain-object.js';

/** Slim's exit codes. */
export const SlimExit = { Ok: 0, Plugin: 1, Input: 2, Network: 3, Daemon: 4 } as const;

/** Slim error codes that name what went wrong in Dify's terms. */
const CODE_TYPES: Record<string, string> = {
  PLUGIN_NOT_FOUND: 'PluginNotFoundError',
  PLUGIN_INIT_ERROR: 'PluginInitError',
  PLUGIN_EXEC_ERROR: 'PluginExecError',
};

/** The `{code, message}` line slim writes to stderr before a non-zero exit. */
function stderrError(stderr: string): { code: string; message: string } {
  const lines = stderr.trim().split('\n').reverse();
  for (const line of lines) {
    try {
      const v: unknown = JSON.parse(line);
      if (isPlainObject(v) && typeof v['message'] === 'string') return { code: jsonText(v['code']), message: v['message'] };
    } catch {
      // not the JSON line
    }
  }
  return { code: '', message: stderr.trim() };
}

function slimError(code: string, message: string): DifyError {
  return unwrapErrorMessage(message, (Object.hasOwn(CODE_TYPES, code) ? CODE_TYPES[code] : undefined) ?? 'SlimError', { code });
}

/** The longest free-text slim message an agent reads; the rest is the worker log's. */
const AGENT_DETAIL_CHARS = 300;

/**
 * A message that is not the SDK's JSON error (installer output, say: `init python env:` and
 * uv's trace, thousands of characters) reaches the agent as its first line, bounded; the whole
 * text goes to the log.
 */
function agentSized(message: string, code: string, log: Logger, secrets: readonly string[]): string {
  const t = message.trim();
  if (t.startsWith('{') || (t.length <= AGENT_DETAIL_CHARS && !t.includes('\n'))) return message;
  log.warn({ slimCode: code, detail: truncate(redact(t, secrets), 16_000) }, 'slim error, in full');
  const first = t.split('\n')[0]!.trim();
  return `${truncate(first, AGENT_DETAIL_CHARS)} (the full output is in the worker's log)`;
}

/**
 * Slim's output as stream items. Remote mode: a chunk is the daemon's whole envelope, error
 * envelopes included. Local mode: a chunk is the raw invoke message; a plugin error is an
 * `error` event, exit code 0 and no `done`. Exit codes 1-4 come with a JSON line on stderr;
 * code 4's message is `status N: body`, the daemon's own HTTP error.
 */
export async function* slimItems(outputs: AsyncIterable<SlimOutput>, mode: SlimMode, log: Logger, secrets: readonly string[]): AsyncGenerator<StreamItem> {
  let done = false;
  for await (const out of outputs) {
    if (out.kind === 'line') {
      const line = out.value;
      if (!isPlainObject(line) || typeof line['event'] !== 'string') throw new ToolFailedError('tool invoke error: the plugin runner wrote an unexpected line');
      const data = line['data'];
      switch (line['event']) {
        case 'message':
          log.debug({ stage: isPlainObject(data) ? data['stage'] : undefined, progress: isPlainObject(data) ? data['message'] : undefined }, 'slim progress');
          break;
        case 'chunk':
          if (mode === 'local') yield { kind: 'message', value: data };
          else if (isPlainObject(data) && data['code'] === 0) yield { kind: 'message', value: data['data'] };
          else {
            yield { kind: 'error', error: unwrapDifyError(data) };
            return;
          }
          break;
        case 'error': {
          const d = isPlainObject(data) ? data : {};
          const code = jsonText(d['code']);
          yield { kind: 'error', error: slimError(code, agentSized(jsonText(d['message'], 'plugin error'), code, log, secrets)) };
          return;
        }
        case 'done':
          done = true;
          break;
        default:
          log.debug({ event: line['event'] }, 'unknown slim event');
      }
      continue;
    }

    // The process ended.
    const { code, message } = stderrError(out.stderr);
    const detail = truncate(redact(message, secrets), 500);
    if (out.code === SlimExit.Ok) {
      if (!done) throw new ToolFailedError('tool invoke error: the plugin stopped without finishing its answer');
      return;
    }
    log.warn({ exitCode: out.code, signal: out.signal, slimCode: code, detail }, 'slim failed');
    switch (out.code) {
      case SlimExit.Plugin:
        yield { kind: 'error', error: slimError(code, message) };
        return;
      case SlimExit.Network:
        throw new UnavailableError(`tool invoke error: the plugin could not be reached (${detail})`);
      case SlimExit.Daemon: {
        const m = /^status (\d{3}): ([\s\S]*)$/.exec(message);
        yield { kind: 'error', error: m ? unwrapDifyError(m[2] ?? '', Number(m[1])) : slimError(code, message) };
        return;
      }
      case SlimExit.Input:
        log.error({ slimCode: code, detail }, 'slim refused its input or configuration');
        throw new ToolFailedError(`tool invoke error: the plugin runner refused its input (${detail})`);
      default:
        throw new ToolFailedError(
          out.signal
            ? `tool invoke error: the plugin runner was killed (${out.signal})`
            : `tool invoke error: the plugin runner exited with code ${String(out.code)}`,
        );
    }
  }
}
