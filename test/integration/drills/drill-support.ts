import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { inject } from 'vitest';
import { PROBE_MODULE_URL } from '../../../bench/child-process.js';
import type { DrillContext } from '../../../bench/drills/drill-context.js';
import { TEST_TRANSPORT } from '../../support/transport-under-test.js';

/** The drills start real `toolwire run` processes (the compiled dist/), which preload the compiled probe. */
export function requireBuild(): void {
  const main = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));
  if (!existsSync(main) || !existsSync(fileURLToPath(PROBE_MODULE_URL))) {
    throw new Error('the drills run the built CLI and the built probe: run `npm run build && npm run build:bench` first (npm test does)');
  }
}

/** A short-form drill context on the broker the integration setup provides. */
export function shortDrillContext(lines: string[] = []): DrillContext {
  return {
    broker: { pulsarUrl: inject('pulsarUrl'), adminUrl: inject('pulsarAdminUrl') },
    transport: TEST_TRANSPORT,
    form: 'short',
    log: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    say: (line) => lines.push(line),
  };
}
