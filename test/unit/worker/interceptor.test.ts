import { describe, expect, it } from 'vitest';
import { compose, type CallInput, type CallResult, type Interceptor } from '../../../src/worker/interceptor.js';
import { Outcome } from '../../../src/worker/outcome.js';
import { loggingInterceptor } from '../../../src/worker/logging-interceptor.js';
import { captureLogger } from '../../support/harness.js';

const input = (): CallInput => ({
  service: { id: 's' } as CallInput['service'],
  message: { properties: { id: 'r1' }, redeliveryCount: 0 } as unknown as CallInput['message'],
  receivedAt: 0,
  startedAt: 0,
});

const result = (outcome: Outcome, errorType?: string): CallResult => ({
  outcome,
  tool: undefined,
  pluginStartedAt: undefined,
  pluginEndedAt: undefined,
  errorType,
});

describe('the interceptor chain', () => {
  it('runs the first outermost, each around the next, and the core once', async () => {
    const seen: string[] = [];
    const named =
      (name: string): Interceptor =>
      async (c, next) => {
        seen.push(`${name} in`);
        const r = await next(c);
        seen.push(`${name} out ${r.outcome}`);
        return r;
      };
    let core = 0;
    const chain = compose([named('a'), named('b')], async () => {
      core++;
      seen.push('core');
      return result(Outcome.Failed);
    });
    expect((await chain(input())).outcome).toBe(Outcome.Failed);
    expect(core).toBe(1);
    expect(seen).toEqual(['a in', 'b in', 'core', 'b out failed', 'a out failed']);
  });

  it('is the core itself when there are no interceptors', async () => {
    const core = async () => result(Outcome.Answered);
    expect(compose([], core)).toBe(core);
  });

  it('logs each settled request at debug, and is left out of the chain above debug', async () => {
    expect(loggingInterceptor(captureLogger('info').log)).toBeUndefined();
    const { log, lines } = captureLogger('debug');
    const failed = result(Outcome.Failed, 'timeout');
    expect(await loggingInterceptor(log)!(input(), async () => failed)).toBe(failed);
    expect(JSON.parse(lines()[0]!)).toMatchObject({ requestId: 'r1', outcome: 'failed', errorType: 'timeout', msg: 'request settled' });
  });
});
