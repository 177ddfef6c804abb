import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ProgressReporter } from '../../../bench/progress.js';

function sink() {
  let out = '';
  return { stream: new Writable({ write: (c: Buffer, _e, cb) => ((out += c.toString()), cb()) }), text: () => out };
}
const p = { phase: 'measure' as const, done: 250, total: 1000, elapsedMs: 1000, durationMs: undefined, ratePerSec: 250, p99Ms: 3.5 };

describe('ProgressReporter', () => {
  it('redraws one line in place on a terminal', () => {
    const s = sink();
    const r = new ProgressReporter(s.stream, true);
    r.update('toolwire-single', p);
    r.update('toolwire-single', { ...p, done: 500 });
    expect(s.text()).toContain('\r\x1b[2Ktoolwire-single measure [######..................]  25% 250/1,000  250 req/s  p99 3.50 ms');
    expect(s.text()).toContain(' 50% 500/1,000');
    expect(s.text()).not.toContain('\n');
  });

  it('writes plain lines, no more often than asked, elsewhere', () => {
    const s = sink();
    const r = new ProgressReporter(s.stream, false, 60_000);
    r.update('floor-single', p);
    r.update('floor-single', { ...p, done: 500 });
    expect(s.text()).toBe('floor-single measure 25% 250/1,000 250 req/s  p99 3.50 ms\n');
  });
});
