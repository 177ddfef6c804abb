import { describe, expect, it } from 'vitest';
import type { Tool, ToolService } from '../../../src/catalog/descriptors.js';
import { TimeoutError } from '../../../src/errors.js';
import type { CallAbort } from '../../../src/worker/call-abort.js';
import { PreparedCall } from '../../../src/worker/prepared-call.js';
import { captureLogger } from '../../support/harness.js';

const service = { id: 'svc' } as ToolService;

function callOf(user?: string): { call: PreparedCall; abort: CallAbort; lines: () => string[] } {
  const { log, lines } = captureLogger();
  const call = new PreparedCall(
    { requestId: 'req-1', service, tool: { name: 'echo' } as Tool, config: { k: 1 }, arguments: { text: 'hi' }, user, stream: false, timeoutMs: 5_000 },
    log,
  );
  return { call, abort: PreparedCall.abortOf(call), lines };
}

describe('a prepared call', () => {
  it('shows its plugin the call and nothing of the worker; `user` only when the agent sent one', () => {
    const keys = ['arguments', 'config', 'requestId', 'service', 'stream', 'timeoutMs', 'tool'];
    expect(Object.keys(callOf().call).sort()).toEqual(keys);
    expect('user' in callOf().call).toBe(false);
    const withUser = callOf('ada').call;
    expect(Object.keys(withUser).sort()).toEqual([...keys, 'user'].sort());
    expect(withUser.user).toBe('ada');
    expect(withUser.arguments).toEqual({ text: 'hi' });
  });

  it('logs with the request id and the tool, through one child logger', () => {
    const { call, lines } = callOf();
    expect(call.log).toBe(call.log);
    call.log.info('from the plugin');
    expect(JSON.parse(lines()[0]!)).toMatchObject({ requestId: 'req-1', tool: 'echo', msg: 'from the plugin' });
  });

  it('makes its abort once, whoever asks first', () => {
    const { call, abort } = callOf();
    expect(PreparedCall.abortOf(call)).toBe(abort);
    const fresh = callOf().call;
    const signal = fresh.signal;
    PreparedCall.abortOf(fresh).abort(new TimeoutError('too slow'));
    expect(signal.aborted).toBe(true);
  });

  it('gives the signal its abort aborts, also when it is first read after the abort', () => {
    const { call, abort } = callOf();
    const signal = call.signal;
    expect(signal.aborted).toBe(false);
    abort.abort(new TimeoutError('too slow'));
    expect(signal.aborted).toBe(true);
    const late = callOf();
    late.abort.abort(new TimeoutError('too slow'));
    expect(late.call.signal.reason).toBeInstanceOf(TimeoutError);
  });
});
