import { beforeAll, describe, expect, it } from 'vitest';
import { RELOAD_DRILL, configReloadDrill } from '../../../bench/drills/config-reload-drill.js';
import { requireBuild, shortDrillContext } from './drill-support.js';

beforeAll(requireBuild);

describe('drill: live config changes under load (short form)', () => {
  it.each([
    ['trustgraph', false],
    ['directory', false],
    ['directory', true],
  ] as const)(
    'serves every change from %s without a restart and loses no call of the unchanged tool (persistent requests: %s)',
    async (source, persistentRequests) => {
      const r = await configReloadDrill(shortDrillContext(), { ...RELOAD_DRILL.short, source, persistentRequests });
      expect(r.counts['served']).toBe(RELOAD_DRILL.short.reloads);
      expect(r.counts['unserved']).toBe(0);
      expect(r.counts['probesLost']).toBe(0);
      // The load ran across the changes, or the drill proved nothing.
      expect(r.counts['steadyAnswered']).toBeGreaterThan(0);
      expect(r.counts['steadyFailed']).toBe(0);
      expect(r.counts['steadyLost']).toBe(0);
      expect(r.passed).toBe(true);
    },
    240_000,
  );
});
