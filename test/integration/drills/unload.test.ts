import { beforeAll, describe, expect, it } from 'vitest';
import { UNLOAD_DRILL, unloadDrill } from '../../../bench/drills/unload-drill.js';
import { requireBuild, shortDrillContext } from './drill-support.js';

beforeAll(requireBuild);

// Runs on the shared broker, in a namespace of its own (tg/unload-drill-<random>): only that
// namespace and its topics are ever unloaded, then deleted.
describe('drill: every tool topic and the namespace unloaded under load (short form)', () => {
  it('answers every request on the persistent topic with its own answer; measures the non-persistent loss', async () => {
    const lines: string[] = [];
    const r = await unloadDrill(shortDrillContext(lines), UNLOAD_DRILL.short);
    const why = JSON.stringify({ counts: r.counts, figures: r.figures, notes: r.notes, lines }, null, 1);
    expect(r.counts['topicUnloads'], why).toBe(UNLOAD_DRILL.short.rounds * 4);
    expect(r.counts['namespaceUnloads'], why).toBe(UNLOAD_DRILL.short.rounds);
    expect(r.counts['persistentSent'], why).toBeGreaterThan(0);
    expect(r.counts['persistentUnanswered'], why).toBe(0);
    expect(r.counts['persistentFailed'], why).toBe(0);
    expect(r.counts['persistentAnswered'], why).toBe(r.counts['persistentSent']);
    // Measured, not asserted: what a non-persistent topic dropped, and answers beyond the first.
    process.stderr.write(`unload drill: ${JSON.stringify(r.counts)} ${JSON.stringify(r.figures)}\n`);
    expect(r.passed, why).toBe(true);
  }, 240_000);
});
