import pino, { type Logger } from 'pino';

/** Paths pino blanks out wherever they appear in a log line. */
export const REDACT_PATHS = [
  'apiKey',
  'api_key',
  'key',
  'token',
  'password',
  'secret',
  'credentials',
  'authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.password',
  '*.secret',
  '*.credentials',
  '*.authorization',
  '*.headers["x-api-key"]',
  '*.headers.authorization',
];

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
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    ...(secrets
      ? {
          hooks: {
            // Last line of defence: a secret value that slipped into a message is masked.
            streamWrite(line: string): string {
              let out = line;
              for (const s of secrets()) if (s.length >= 4 && out.includes(s)) out = out.split(s).join('[redacted]');
              return out;
            },
          },
        }
      : {}),
  };
  if (options.destination) return pino(base, options.destination);
  if (options.pretty) {
    return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', destination: 2 } } });
  }
  return pino(base, pino.destination({ dest: 2, sync: false }));
}
