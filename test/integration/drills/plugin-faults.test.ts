import { beforeAll, describe, expect, it } from 'vitest';
import { FAULTS_DRILL, pluginFaultsDrill } from '../../../bench/drills/plugin-faults-drill.js';
import { requireBuild, shortDrillContext } from './drill-support.js';

beforeAll(requireBuild);

describe('drill: tools that hang, throw, crash their process or return 50 MB (short form)', () => {
  it('answers every fault with an error, keeps answering the healthy tool, and stays up', async () => {
    const r = await pluginFaultsDrill(shortDrillContext(), FAULTS_DRILL.short);
    const c = r.counts;
    for (const f of ['hang', 'hang-stream', 'throw', 'reject', 'huge-50MB', 'huge-stream-50MB', 'slim-process-killed', 'daemon-dropped-connection']) {
      expect(c[`fault:${f}`], f).toBeGreaterThan(0);
    }
    expect(c['faultsUnanswered']).toBe(0);
    expect(c['faultsAnsweredWithSuccess']).toBe(0);
    expect(c['faultsWrongErrorType']).toBe(0);
    expect(c['healthyAlone']).toBeGreaterThan(0);
    expect(c['healthyBeside']).toBeGreaterThan(0);
    expect(c['healthyAloneWrong']).toBe(0);
    expect(c['healthyBesideWrong']).toBe(0);
    expect(c['workerAlive']).toBe(1);
    expect(r.passed).toBe(true);
  }, 240_000);
});
