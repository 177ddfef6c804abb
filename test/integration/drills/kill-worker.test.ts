import { beforeAll, describe, expect, it } from 'vitest';
import { KILL_DRILL, killWorkerDrill } from '../../../bench/drills/kill-worker-drill.js';
import { requireBuild, shortDrillContext } from './drill-support.js';

beforeAll(requireBuild);

describe('drill: kill -9 the worker with requests in flight (short form)', () => {
  it('answers every request after a restart, counting duplicates', async () => {
    const r = await killWorkerDrill(shortDrillContext(), KILL_DRILL.short);
    expect(r.counts['sent']).toBe(KILL_DRILL.short.requests);
    expect(r.counts['sendFailures']).toBe(0);
    // The kill must land mid-run, or the drill proved nothing.
    expect(r.counts['answeredBeforeKill']).toBeLessThan(KILL_DRILL.short.requests);
    expect(r.counts['answeredAfterKill']).toBeGreaterThan(0);
    expect(r.counts['missing']).toBe(0);
    expect(r.counts['wrongAnswers']).toBe(0);
    expect(r.counts['answered']).toBe(KILL_DRILL.short.requests);
    expect(r.counts['duplicates']).toBeGreaterThanOrEqual(0);
    expect(r.passed).toBe(true);
  }, 240_000);
});
