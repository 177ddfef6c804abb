import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { hostileMix, prng } from '../../../bench/drills/hostile-envelopes.js';

const mix = hostileMix({ total: 2_000, seed: 11, maxPayloadBytes: 64 * 1024, idPrefix: 't' });

/** An independent reading of the wire rules: is this envelope one the worker can decode? */
function decodable(data: Buffer): boolean {
  if (!isUtf8(data)) return false;
  let body: unknown;
  try {
    body = JSON.parse(data.toString('utf8'));
  } catch {
    return false;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const o = body as Record<string, unknown>;
  if (o['user'] !== undefined && o['user'] !== null && typeof o['user'] !== 'string') return false;
  for (const f of ['config', 'arguments']) {
    const raw = o[f];
    if (raw === undefined || raw === null || raw === '') continue;
    let v: unknown = raw;
    if (typeof raw === 'string') {
      try {
        v = JSON.parse(raw);
      } catch {
        return false;
      }
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  }
  return true;
}

describe('hostileMix', () => {
  it('is the same mix for the same seed, and a different one for another seed', () => {
    const again = hostileMix({ total: 2_000, seed: 11, maxPayloadBytes: 64 * 1024, idPrefix: 't' });
    expect(again.map((e) => e.data.toString('base64'))).toEqual(mix.map((e) => e.data.toString('base64')));
    const other = hostileMix({ total: 2_000, seed: 12, maxPayloadBytes: 64 * 1024, idPrefix: 't' });
    expect(other.map((e) => e.category)).not.toEqual(mix.map((e) => e.category));
  });

  it('makes every envelope that expects invalid-request undecodable by construction', () => {
    const invalid = mix.filter((e) => e.expect.kind === 'error' && e.expect.type === 'invalid-request');
    expect(invalid.length).toBeGreaterThan(200);
    for (const e of invalid) expect(decodable(e.data), `${e.category} #${e.seq}`).toBe(false);
  });

  it('makes every envelope that expects an answer decodable, with an id', () => {
    for (const e of mix.filter((x) => x.expect.kind === 'answer')) {
      expect(decodable(e.data), `${e.category} #${e.seq}`).toBe(true);
      expect(e.properties['id']).toBeTruthy();
    }
  });

  it('gives dead-letter envelopes no usable id, and every other envelope a unique one', () => {
    const ids = new Set<string>();
    for (const e of mix) {
      if (e.expect.kind === 'dead-letter') {
        expect(e.properties['id'] ?? '').toBe('');
      } else {
        expect(ids.has(e.properties['id']!)).toBe(false);
        ids.add(e.properties['id']!);
      }
      expect(e.properties['drill-seq']).toBe(String(e.seq));
    }
  });

  it('makes huge payloads larger than the limit they are meant to break', () => {
    const huge = mix.filter((e) => e.category === 'huge-payload');
    expect(huge.length).toBeGreaterThan(0);
    for (const e of huge) expect(e.data.length).toBeGreaterThan(64 * 1024);
  });

  it('covers every category in 2,000 envelopes', () => {
    const cats = new Set(mix.map((e) => e.category));
    for (const c of [
      'good',
      'good-stream',
      'good-long-id',
      'good-unknown-keys',
      'truncated-json',
      'control-byte',
      'invalid-utf8',
      'binary-garbage',
      'empty',
      'wrong-types',
      'wrong-argument-types',
      'deep-array',
      'deep-object',
      'huge-payload',
      'unknown-tool',
      'no-id',
      'empty-id',
    ]) {
      expect(cats.has(c), c).toBe(true);
    }
  });
});

describe('prng', () => {
  it('is deterministic and stays in [0, 1)', () => {
    const a = prng(1);
    const b = prng(1);
    for (let i = 0; i < 1000; i++) {
      const x = a();
      expect(x).toBe(b());
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });
});
