import { beforeAll, describe, expect, it } from 'vitest';
import { RESTART_DRILL, brokerRestartDrill } from '../../../bench/drills/broker-restart-drill.js';
import { requireBuild, shortDrillContext } from './drill-support.js';

beforeAll(requireBuild);

// Starts a broker of its own (scripts/pulsar-broker.sh: Java 17+, the cached distribution)
// on free ports and stops only that one: the shared broker is never touched.
describe('drill: stop and restart the broker under load (short form)', () => {
  it('loses no request the broker confirmed on a persistent topic', async () => {
    const r = await brokerRestartDrill(shortDrillContext(), RESTART_DRILL.short);
    expect(r.counts['published']).toBe(RESTART_DRILL.short.requests);
    expect(r.counts['answeredBeforeStop']).toBeLessThan(RESTART_DRILL.short.requests);
    expect(r.counts['missing']).toBe(0);
    expect(r.counts['wrongAnswers']).toBe(0);
    expect(r.counts['answered']).toBe(RESTART_DRILL.short.requests);
    expect(r.passed).toBe(true);
  }, 900_000);
});
