import { describe, expect, it } from 'vitest';
import { measureHotPath, type HotPathOptions } from '../../../bench/hot-path.js';

const base: HotPathOptions = {
  requests: 3_000,
  warmupRequests: 500,
  concurrency: 16,
  argumentBytes: 1024,
  chunks: 0,
  stream: false,
  logLevel: 'info',
};

describe('the hot-path benchmark', () => {
  // The measured run used to end with the warm-up's reader: it timed the publishing of
  // requests and read no answer of them.
  it.each([
    ['worker', 'persistent'],
    ['worker', 'non-persistent'],
    ['floor', 'persistent'],
    ['floor', 'non-persistent'],
  ] as const)('%s on %s request topics: every request of the measured run is answered', async (target, requestTopics) => {
    const r = await measureHotPath({ ...base, target, requestTopics });
    expect(r.answered).toBe(base.requests);
    expect(r.wallUsPerRequest).toBeGreaterThan(0);
    expect(r.cpuUsPerRequest).toBeGreaterThan(0);
    expect(r.requestsPerSec).toBeCloseTo((base.requests * 1e6) / (r.wallUsPerRequest * base.requests), 3);
  });

  it('streams: the answers counted are the final ones', async () => {
    const r = await measureHotPath({ ...base, requests: 500, chunks: 5, stream: true, requestTopics: 'non-persistent' });
    expect(r.answered).toBe(500);
  });

  it('refuses a floor with a module tool: the floor answers as the builtin echo', async () => {
    await expect(measureHotPath({ ...base, target: 'floor', tool: 'typed' })).rejects.toThrow(/builtin echo/);
  });
});
