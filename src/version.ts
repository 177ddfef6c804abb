import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * toolwire's own version, from the nearest package.json named toolwire above this file (the
 * package when installed, the checkout otherwise; dist/ and the bench's build sit at
 * different depths). "unknown" if none is found.
 */
function findVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'toolwire' && pkg.version) return pkg.version;
    } catch {
      // no package.json here: look further up
    }
    const up = dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

export const VERSION = findVersion();
