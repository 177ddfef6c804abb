import { beforeAll, describe, expect, it } from 'vitest';
import { OUTAGE_DRILL, brokerOutageDrill } from '../../../bench/drills/broker-outage-drill.js';
import { TEST_TRANSPORT } from '../../support/transport-under-test.js';
import { requireBuild, shortDrillContext } from './drill-support.js';

beforeAll(requireBuild);

// Starts a broker of its own (scripts/pulsar-broker.sh on free ports) and stops only that one,
// and TrustGraph's config service from the interop venv (scripts/python-env.sh).
describe('drill: the broker down under load, the fleet on TrustGraph config (short form)', () => {
  it('keeps every process up, ready again within 10 s, serving a later change, answering every persistent request, logging the outage once', async () => {
    const lines: string[] = [];
    const r = await brokerOutageDrill(shortDrillContext(lines), OUTAGE_DRILL.short);
    const why = JSON.stringify({ counts: r.counts, figures: r.figures, notes: r.notes, lines }, null, 1);
    expect(r.counts['processesExited'], why).toBe(0);
    expect(r.counts['changeServed'], why).toBe(1);
    expect(r.counts['persistentSent'], why).toBeGreaterThan(0);
    expect(r.counts['persistentUnanswered'], why).toBe(0);
    expect(r.counts['persistentFailed'], why).toBe(0);
    expect(r.counts['nonPersistentAnswered'], why).toBeGreaterThan(0);
    for (const name of ['worker-a', 'worker-b', 'mcp-serve']) {
      expect(r.figures[`outage1Ready_${name}`], why).toBeLessThanOrEqual(OUTAGE_DRILL.short.readyWithinMs);
      if (TEST_TRANSPORT === 'pulsar-ws') {
        expect(r.counts[`${name}LostLines`], why).toBe(1);
        expect(r.counts[`${name}RecoveredLines`], why).toBe(1);
      }
    }
    expect(r.passed, why).toBe(true);
  }, 240_000);
});
