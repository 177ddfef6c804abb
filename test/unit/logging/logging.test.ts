import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/logging.js';

function capture(secrets: readonly string[] = []) {
  const lines: string[] = [];
  const destination = new Writable({
    write(c: Buffer, _e, cb) {
      lines.push(c.toString());
      cb();
    },
  });
  return { log: createLogger({ level: 'debug', destination, secrets: () => secrets }), lines };
}

describe('createLogger', () => {
  it('blanks credential fields at any depth, errors included', () => {
    const { log, lines } = capture();
    const err = Object.assign(new Error('request failed'), { request: { headers: { authorization: 'Bearer SECRET1', 'X-Api-Key': 'SECRET2' } } });
    log.warn({ err, a: { b: { token: 'SECRET3', keep: 'visible' } }, list: [{ password: 'SECRET4' }] }, 'x');
    const out = lines.join('');
    for (const s of ['SECRET1', 'SECRET2', 'SECRET3', 'SECRET4']) expect(out).not.toContain(s);
    expect(out).toContain('visible');
    expect(out).toContain('request failed');
    expect(out).toContain('[redacted]');
  });

  it('masks known secret values wherever they appear, even inside a message', () => {
    const { log, lines } = capture(['pulsar-token-123']);
    log.info({ url: 'ws://host/?token=pulsar-token-123' }, 'connecting with pulsar-token-123');
    expect(lines.join('')).not.toContain('pulsar-token-123');
  });

  it('leaves a clean line as it was', () => {
    const { log, lines } = capture();
    log.info({ service: 'joke', n: 1 }, 'fine');
    expect(JSON.parse(lines[0]!)).toMatchObject({ service: 'joke', n: 1, msg: 'fine' });
  });
});

describe('createLogger: the gaps an outside review found', () => {
  it('blanks credential fields inside an error cause and an AggregateError’s errors', () => {
    const { log, lines } = capture();
    const inner = Object.assign(new Error('backend refused'), { request: { headers: { authorization: 'Bearer CAUSE-SECRET' } } });
    const err = new Error('call failed', { cause: inner });
    const many = new AggregateError([Object.assign(new Error('one'), { token: 'AGG-SECRET' })], 'several failed');
    log.warn({ err, many }, 'x');
    const out = lines.join('');
    expect(out).not.toContain('CAUSE-SECRET');
    expect(out).not.toContain('AGG-SECRET');
    expect(out).toContain('backend refused');
  });

  it('masks a short secret too', () => {
    const { log, lines } = capture(['k9x']);
    log.info('the key is k9x');
    expect(lines.join('')).not.toContain('k9x');
  });

  it('masks a secret whose characters JSON escapes in the line', () => {
    const secret = 'pa"ss\\wo\nrd-é';
    const { log, lines } = capture([secret]);
    log.info({ detail: `sent ${secret}` }, `login with ${secret}`);
    const out = lines.join('');
    expect(out).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(out).not.toContain('wo\\nrd');
    expect(out.match(/\[redacted\]/g)).toHaveLength(2);
  });
});
