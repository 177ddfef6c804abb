import type { Logger } from 'pino';
import { sleep } from '../async/sleep.js';
import type { NativeLogLevel } from './pulsar-native-client.js';

/**
 * libpulsar's levels (DEBUG, INFO, WARN, ERROR) as ours. Its INFO is chatter about its own
 * connections and lookups (some 40 lines for a start and one call), so it goes to debug;
 * warnings and errors keep their level.
 */
const NATIVE_LOG_LEVELS = ['debug', 'debug', 'warn', 'error'] as const;

/** close() is done once libpulsar has logged nothing for this long... */
const LOG_QUIET_MS = 50;
/** ...or after this long, whatever it still logs. */
const LOG_QUIET_MAX_MS = 2_000;

/**
 * libpulsar's log lines, relayed to our logger, and a wait for the last of them.
 *
 * pulsar-client hands each line from libpulsar's threads to JavaScript through a thread-safe
 * function. A line still queued there when the process exits makes the binding throw while
 * Node tears down, and the process aborts (SIGABRT; pulsar-client 1.18). libpulsar logs the
 * end of its connections from its own thread, after client.close() has resolved, so a process
 * that exits at once after a close can lose that race (docs/pulsar.md).
 */
export class NativeLog {
  private lines = 0;

  constructor(private readonly log: Logger) {}

  readonly relay = (level: NativeLogLevel, file: string, line: number, message: string): void => {
    this.lines++;
    this.log[NATIVE_LOG_LEVELS[level] ?? 'warn']({ file, line, detail: message }, 'libpulsar');
  };

  /** Resolves once no line came for LOG_QUIET_MS (at most LOG_QUIET_MAX_MS): call after closing the clients. */
  async quiet(): Promise<void> {
    const deadline = Date.now() + LOG_QUIET_MAX_MS;
    let seen = -1;
    while (seen !== this.lines && Date.now() < deadline) {
      seen = this.lines;
      await sleep(LOG_QUIET_MS);
    }
  }
}
