import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { inject } from 'vitest';
import type { DrillContext } from '../../../src/bench/drills/drill-context.js';

/** The drills start real `toolwire run` processes, which run the compiled dist/. */
export function requireBuild(): void {
  const main = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));
  const probe = fileURLToPath(new URL('../../../dist/bench/process-probe.js', import.meta.url));
  if (!existsSync(main) || !existsSync(probe)) throw new Error('the drills run the built CLI: run `npm run build` first (npm test does)');
}

/** A short-form drill context on the broker the integration setup provides. */
export function shortDrillContext(lines: string[] = []): DrillContext {
  return {
    broker: { pulsarUrl: inject('pulsarUrl'), adminUrl: inject('pulsarAdminUrl') },
    form: 'short',
    log: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    say: (line) => lines.push(line),
  };
}
