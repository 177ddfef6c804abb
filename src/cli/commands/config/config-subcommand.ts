import type { Settings } from '../../../settings.js';
import type { CommandIo } from '../../command.js';
import type { ConfigValues } from './config-flags.js';
import type { OpenedStore } from './open-store.js';

/** A `toolwire config <subcommand>` command line, parsed, with the settings it names (not TrustGraph's wire ConfigRequest). */
export interface ConfigCommandLine {
  readonly io: CommandIo;
  readonly values: ConfigValues;
  /** What follows the operation's name (the directory of `import`). */
  readonly operands: readonly string[];
  readonly settings: Settings;
}

/** What an operation does with the store, once it is open; the exit code. */
export type StoreAction = (opened: OpenedStore) => Promise<number>;

/**
 * One operation: checks its arguments before any store is opened (a mistake costs no
 * connection), then says what it will do with the store.
 */
export type ConfigSubcommand = (request: ConfigCommandLine) => Promise<StoreAction>;
