import { describe, expect, it } from 'vitest';
import { agentError } from '../../../../src/plugins/dify-common/agent-error.js';
import { unwrapDifyError, unwrapErrorMessage } from '../../../../src/plugins/dify-common/dify-error.js';
import { daemonErrorEnvelope, daemonErrorText, goJson, pluginErrorEnvelope } from '../../../fakes/dify-wire.js';

describe('unwrapDifyError', () => {
  it('unwraps the triple-encoded plugin error down to its own type, keeping the traceback aside', () => {
    const e = unwrapDifyError(JSON.parse(pluginErrorEnvelope('ValueError', 'bad input', 'Traceback (most recent call last):\n  File "t.py"')));
    expect(e).toMatchObject({ errorType: 'ValueError', message: 'bad input', chain: ['PluginInvokeError', 'ValueError'], code: -500 });
    expect(e.traceback).toContain('File "t.py"');
  });

  it('unwraps PluginInvokeError nested more than once', () => {
    const inner = daemonErrorText('PluginInvokeError', daemonErrorText('PluginInvokeError', daemonErrorText('KeyError', 'x')));
    expect(unwrapDifyError(goJson({ code: -500, data: null, message: inner })).chain).toEqual(['PluginInvokeError', 'PluginInvokeError', 'KeyError']);
  });

  it('does not unwrap the message of a type other than PluginInvokeError', () => {
    const e = unwrapDifyError({ error_type: 'ValueError', message: daemonErrorText('KeyError', 'k') });
    expect(e.errorType).toBe('ValueError');
  });

  it('reads a daemon error from the stream', () => {
    const e = unwrapDifyError(daemonErrorEnvelope(-500, 'PluginDaemonInternalServerError', 'killed by timeout'));
    expect(e).toMatchObject({ errorType: 'PluginDaemonInternalServerError', message: 'killed by timeout' });
  });

  it('reads the flat form with its HTTP status', () => {
    expect(unwrapDifyError('{"error_type":"PluginNotFoundError","message":"plugin not found"}', 404)).toMatchObject({
      errorType: 'PluginNotFoundError',
      httpStatus: 404,
    });
  });

  it('names the type from the code or the status when the message is plain text', () => {
    expect(unwrapDifyError({ code: -401, message: 'nope', data: null }).errorType).toBe('PluginDaemonUnauthorizedError');
    expect(unwrapDifyError('<html>bad gateway</html>', 401)).toMatchObject({ errorType: 'PluginDaemonUnauthorizedError', message: '<html>bad gateway</html>' });
    expect(unwrapDifyError('', 418)).toMatchObject({ errorType: 'HTTP418', message: 'HTTP status 418' });
  });

  it('keeps a string code of an unknown route', () => {
    expect(unwrapDifyError('{"code":"not_found","message":"route not found"}', 404)).toMatchObject({ code: 'not_found', message: 'route not found' });
  });

  it('cuts a traceback out of a message that carries one', () => {
    const e = unwrapErrorMessage('it broke\nTraceback (most recent call last):\n  File "a.py"', 'RuntimeError');
    expect(e.message).toBe('it broke');
    expect(e.traceback).toMatch(/^Traceback/);
  });
});

describe('agentError', () => {
  const ctx = { toolName: 'search', secrets: ['s3cr3t-value'] };
  const at = (errorType: string, message = 'm', httpStatus?: number): string =>
    agentError({ errorType, message, chain: [errorType], traceback: undefined, code: undefined, httpStatus }, ctx).message;

  it('maps by the innermost type, credentials first', () => {
    expect(at('CredentialsValidateFailedError')).toBe('Please check your tool provider credentials');
    expect(at('ToolProviderNotFoundError')).toBe('there is not a tool named search');
    expect(at('ValueError', 'Provider `x` not found')).toBe('there is not a tool named search');
    expect(at('SomethingValidationError', 'd')).toBe('tool parameters validation error: d, please check your tool parameters');
    expect(at('Whatever', 'd', 400)).toBe('tool parameters validation error: d, please check your tool parameters');
    expect(at('KeyError', 'd')).toBe('tool invoke error: d');
  });

  it('treats HTTP 429 as a rate limit, retriable', () => {
    const e = agentError({ errorType: 'X', message: 'busy', chain: [], traceback: undefined, code: undefined, httpStatus: 429 }, ctx);
    expect(e.retriable).toBe(true);
  });

  it('masks secrets and bounds the detail', () => {
    expect(at('KeyError', 'value s3cr3t-value here')).toBe('tool invoke error: value [redacted] here');
    expect(at('KeyError', 'x'.repeat(5000)).length).toBeLessThan(2100);
  });
});
