/**
 * Soak (short form): config churn through the directory and through TrustGraph's own config
 * service leaves the worker's broker subscriptions, consumers, metric series, listeners and
 * heap flat. The 1,000-change form is the `config-churn` drills (npm run drills).
 */
import { describe, expect, it } from 'vitest';
import { CHURN_DRILL, configChurnDrill } from '../../bench/drills/config-churn-drill.js';
import { shortDrillContext } from './drills/drill-support.js';

describe('soak: config churn (short form)', () => {
  it.each(['directory', 'trustgraph'] as const)(
    'leaves subscriptions, consumers, series, listeners and heap flat through %s changes',
    async (source) => {
      const lines: string[] = [];
      const r = await configChurnDrill(shortDrillContext(lines), { ...CHURN_DRILL.short, source });
      const c = r.counts;
      const figures = JSON.stringify({ counts: c, figures: r.figures });
      expect(c['changes'], figures).toBeGreaterThanOrEqual(CHURN_DRILL.short.changes);
      // Every churned service is gone by then: nothing of the worker may stay on their topics.
      expect([c['warmSubscriptions'], c['warmConsumers'], c['afterSubscriptions'], c['afterConsumers']], figures).toEqual([0, 0, 0, 0]);
      expect(c['afterSeries'], figures).toBeLessThanOrEqual(c['warmSeries']!);
      expect(c['afterHardStopListeners'], figures).toBeLessThanOrEqual(c['warmHardStopListeners']!);
      expect(c['afterProcessListeners'], figures).toBeLessThanOrEqual(c['warmProcessListeners']!);
      expect(r.passed, JSON.stringify(r)).toBe(true);
    },
    300_000,
  );
});
