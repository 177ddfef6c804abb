import pino, { type Logger } from 'pino';
import { redact, redactFields } from './redact.js';
import { traceLogFields } from './tracing/trace-context.js';

export interface LoggerOptions {
  level?: string;
  /** Human-readable lines (a terminal); JSON otherwise. */
  pretty?: boolean;
  /** Secret values that must never appear verbatim; each is replaced wherever it is found. */
  secrets?: () => readonly string[];
  destination?: pino.DestinationStream;
}

/** The one root logger; components take children of it. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const secrets = options.secrets;
  const base: pino.LoggerOptions = {
    level: options.level ?? 'info',
    // Credentials are blanked by field name at any depth, error objects included.
    formatters: { log: (obj) => redactFields(obj) as Record<string, unknown> },
    // The active span's ids on every line, while tracing is on.
    mixin: traceLogFields,
    ...(secrets
      ? {
          hooks: {
            // Last line of defence: a secret value that slipped into a message is masked.
            streamWrite: (line: string) => redact(line, secrets()),
          },
        }
      : {}),
  };
  if (options.destination) return pino(base, options.destination);
  if (options.pretty) {
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: 2 } },
    });
  }
  return pino(base, pino.destination({ dest: 2, sync: false }));
}
