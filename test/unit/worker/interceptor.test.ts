import { describe, expect, it } from 'vitest';
import { compose, type CallContext, type Interceptor } from '../../../src/worker/interceptor.js';
import { Outcome } from '../../../src/worker/outcome.js';
import { loggingInterceptor } from '../../../src/worker/logging-interceptor.js';
import { captureLogger } from '../../support/harness.js';

const ctx = (): CallContext => ({
  service: { id: 's' } as CallContext['service'],
  message: { properties: { id: 'r1' }, redeliveryCount: 0 } as unknown as CallContext['message'],
  receivedAt: 0,
  startedAt: 0,
  tool: undefined,
  pluginStartedAt: undefined,
  pluginEndedAt: undefined,
  errorType: undefined,
  onAnswer: undefined,
  handoff: undefined,
});

describe('the interceptor chain', () => {
  it('runs the first outermost, each around the next, and the core once', async () => {
    const seen: string[] = [];
    const named =
      (name: string): Interceptor =>
      async (c, next) => {
        seen.push(`${name} in`);
        const o = await next(c);
        seen.push(`${name} out ${o}`);
        return o;
      };
    let core = 0;
    const chain = compose([named('a'), named('b')], async () => {
      core++;
      seen.push('core');
      return Outcome.Failed;
    });
    expect(await chain(ctx())).toBe(Outcome.Failed);
    expect(core).toBe(1);
    expect(seen).toEqual(['a in', 'b in', 'core', 'b out failed', 'a out failed']);
  });

  it('is the core itself when there are no interceptors', async () => {
    const core = async () => Outcome.Answered;
    expect(compose([], core)).toBe(core);
  });

  it('logs each settled request at debug, and is left out of the chain above debug', async () => {
    expect(loggingInterceptor(captureLogger('info').log)).toBeUndefined();
    const { log, lines } = captureLogger('debug');
    const c = { ...ctx(), errorType: 'timeout' };
    expect(await loggingInterceptor(log)!(c, async () => Outcome.Failed)).toBe(Outcome.Failed);
    expect(JSON.parse(lines()[0]!)).toMatchObject({ requestId: 'r1', outcome: 'failed', errorType: 'timeout', msg: 'request settled' });
  });
});
