import { buildCatalog } from '../../../assembly/build-catalog.js';
import { DESCRIPTOR_TYPES } from '../../../config/config-source.js';
import type { ConfigEntry } from '../../../config/config-store.js';
import { ConfigError } from '../../../errors.js';
import { createLogger } from '../../../logging.js';
import { defaultRegistry } from '../../../plugins/default-registry.js';
import { ExecPolicy } from '../../../policy/exec-policy.js';
import { loadSecrets } from '../../../secrets.js';
import type { ConfigCommandLine } from './config-subcommand.js';
import type { OpenedStore } from './open-store.js';

/**
 * The catalog as it would be after `change`, validated; the problems, or none. Items that
 * are not descriptors do not take part.
 */
export async function problemsAfter(
  opened: OpenedStore,
  change: (entries: ConfigEntry[]) => ConfigEntry[],
  { io, settings }: ConfigCommandLine,
): Promise<readonly string[]> {
  const entries = change(await opened.store.entries(DESCRIPTOR_TYPES)).filter((entry) => DESCRIPTOR_TYPES.includes(entry.type));
  try {
    await buildCatalog(
      entries,
      defaultRegistry(),
      {
        log: createLogger({ level: 'silent' }),
        configDir: settings.configDir,
        secrets: loadSecrets(io.env, settings.secretsFile),
        settings: settings.pluginSettings,
      },
      // Not portable only for a directory store: the operator's own files, on this machine.
      opened.portable ? { portable: true } : { policy: new ExecPolicy('directory', settings.execRules) },
    );
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

/** Says why a change is refused (`what`: not written, not deleted); exit code 1. */
export function refuse(io: ConfigCommandLine['io'], problems: readonly string[], what: string): number {
  io.stderr.write(`not ${what}: the catalog would not validate (--force writes anyway)\n`);
  for (const problem of problems) io.stderr.write(`  ${problem}\n`);
  return 1;
}
