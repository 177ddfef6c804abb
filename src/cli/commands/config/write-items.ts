import type { ConfigItem } from '../../../config/config-store.js';
import { problemsAfter, refuse } from './catalog-check.js';
import type { ConfigCommandLine } from './config-subcommand.js';
import type { OpenedStore } from './open-store.js';

/** Puts `items` (put's one, import's many) in one request, unless the catalog would break and --force is not given. */
export async function writeItems(request: ConfigCommandLine, opened: OpenedStore, items: readonly ConfigItem[]): Promise<number> {
  if (!request.values.force) {
    const replaced = (entry: { type: string; key: string }): boolean => items.some((item) => item.type === entry.type && item.key === entry.key);
    const problems = await problemsAfter(
      opened,
      (entries) => [
        ...entries.filter((entry) => !replaced(entry)),
        ...items.map((item) => ({ type: item.type, key: item.key, value: JSON.parse(item.value) as unknown, source: `${item.type}/${item.key} (new value)` })),
      ],
      request,
    );
    if (problems.length > 0) return refuse(request.io, problems, 'written');
  }
  await opened.store.put(items);
  return 0;
}
