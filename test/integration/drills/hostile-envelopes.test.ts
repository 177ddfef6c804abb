import { beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_DRILL, hostileEnvelopesDrill } from '../../../bench/drills/hostile-envelopes-drill.js';
import { requireBuild, shortDrillContext } from './drill-support.js';

beforeAll(requireBuild);

describe('drill: malformed and hostile envelopes among good ones (short form)', () => {
  it.each([
    ['persistent', false],
    ['non-persistent', true],
  ])(
    'on a %s request topic: answers the good, answers the bad with the expected errors, dead-letters the id-less, and stays up',
    async (_kind, nonPersistentRequests) => {
      const r = await hostileEnvelopesDrill(shortDrillContext(), { ...HOSTILE_DRILL.short, nonPersistentRequests });
      const c = r.counts;
      expect(c['sent']).toBe(HOSTILE_DRILL.short.total);
      expect(c['sendFailures']).toBe(0);
      expect(c['good']! + c['badWithId']! + c['idLess']!).toBe(c['sent']);
      expect(c['goodAnsweredCorrectly']).toBe(c['good']);
      expect(c['badAnsweredWithExpectedError']).toBe(c['badWithId']);
      expect(c['unanswered']).toBe(0);
      expect(c['deadLettered']).toBe(c['idLess']);
      expect(c['workerDeadLetteredStat']).toBe(c['idLess']);
      expect(c['workerAlive']).toBe(1);
      // The seeded mix has every kind of hostility in it.
      for (const k of ['truncated-json', 'control-byte', 'invalid-utf8', 'wrong-types', 'deep-array', 'deep-object', 'huge-payload', 'no-id', 'empty-id']) {
        expect(c[`category:${k}`], k).toBeGreaterThan(0);
      }
      expect(r.passed).toBe(true);
    },
    300_000,
  );
});
