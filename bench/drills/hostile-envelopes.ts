import { STREAM_PROPERTY, TOOL_PROPERTY } from '../../src/envelope/properties.js';

/** What the worker must do with an envelope. */
export type Expectation =
  { readonly kind: 'answer'; readonly text: string } | { readonly kind: 'error'; readonly type: string } | { readonly kind: 'dead-letter' };

export interface Envelope {
  readonly seq: number;
  readonly category: string;
  readonly data: Buffer;
  /** Without `id` when the category is an id-less one. */
  readonly properties: Record<string, string>;
  readonly expect: Expectation;
}

/** mulberry32: a small seeded PRNG, so a failing mix can be generated again exactly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const env = (args: unknown, config: unknown = {}) => Buffer.from(JSON.stringify({ config: JSON.stringify(config), arguments: JSON.stringify(args) }), 'utf8');

/** JSON whitespace is space, tab, LF, CR: any other control character is invalid anywhere in a document. */
const CONTROL = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x0b, 0x0c, 0x0e, 0x0f, 0x10, 0x1b, 0x1f];

function insertAt(buf: Buffer, at: number, bytes: number[]): Buffer {
  return Buffer.concat([buf.subarray(0, at), Buffer.from(bytes), buf.subarray(at)]);
}

export interface HostileMixOptions {
  readonly total: number;
  readonly seed: number;
  /** The worker's TOOLWIRE_MAX_PAYLOAD_BYTES: "huge" envelopes are made larger than it. */
  readonly maxPayloadBytes: number;
  /** Prefix of every request id (fresh per run). */
  readonly idPrefix: string;
}

type Maker = (seq: number, id: string, r: () => number) => Omit<Envelope, 'seq' | 'category'>;

/**
 * Good and hostile envelopes, mixed in a seeded order. Every hostile one is invalid by
 * construction (truncated JSON, a control byte or a lone UTF-8 continuation byte inserted,
 * wrong types, nesting 20,000 deep, a payload over the limit...), so what the worker must
 * answer is known without asking the worker's own decoder.
 */
export function hostileMix(o: HostileMixOptions): Envelope[] {
  const r = prng(o.seed);
  const text = (seq: number) => `ok-${seq}-héllo-☕`;
  const good = (seq: number) => env({ text: text(seq) });
  const withId = (id: string, extra: Record<string, string> = {}) => ({ id, ...extra });
  const deep = 20_000;
  const categories: [string, number, Maker][] = [
    ['good', 40, (seq, id) => ({ data: good(seq), properties: withId(id), expect: { kind: 'answer', text: text(seq) } })],
    [
      'good-stream',
      4,
      (seq, id) => ({
        data: env({ text: text(seq), chunks: 5 }),
        properties: withId(id, { [STREAM_PROPERTY]: 'true' }),
        expect: { kind: 'answer', text: text(seq).repeat(5) },
      }),
    ],
    ['good-long-id', 3, (seq, id) => ({ data: good(seq), properties: withId(`${id}-${'i'.repeat(2_000)}`), expect: { kind: 'answer', text: text(seq) } })],
    [
      'good-unknown-keys',
      3,
      (seq, id) => ({
        data: Buffer.from(JSON.stringify({ config: '{}', arguments: JSON.stringify({ text: text(seq) }), extra: [1, { deep: true }], user: 'u' })),
        properties: withId(id),
        expect: { kind: 'answer', text: text(seq) },
      }),
    ],
    [
      'truncated-json',
      8,
      (seq, id, rnd) => {
        const full = good(seq);
        return {
          data: full.subarray(0, 1 + Math.floor(rnd() * (full.length - 2))),
          properties: withId(id),
          expect: { kind: 'error', type: 'invalid-request' },
        };
      },
    ],
    [
      'control-byte',
      6,
      (seq, id, rnd) => {
        const full = good(seq);
        return {
          data: insertAt(full, Math.floor(rnd() * full.length), [CONTROL[Math.floor(rnd() * CONTROL.length)]!]),
          properties: withId(id),
          expect: { kind: 'error', type: 'invalid-request' },
        };
      },
    ],
    [
      'invalid-utf8',
      6,
      (seq, id, rnd) => {
        const full = good(seq);
        // 0x80-0xBF never starts a UTF-8 sequence; 0xFF never appears in UTF-8 at all.
        const b = rnd() < 0.5 ? 0x80 + Math.floor(rnd() * 0x40) : 0xff;
        return { data: insertAt(full, Math.floor(rnd() * full.length), [b]), properties: withId(id), expect: { kind: 'error', type: 'invalid-request' } };
      },
    ],
    [
      'binary-garbage',
      3,
      (_seq, id, rnd) => ({
        data: Buffer.concat([Buffer.from([0xff]), Buffer.from(Array.from({ length: 1 + Math.floor(rnd() * 512) }, () => Math.floor(rnd() * 256)))]),
        properties: withId(id),
        expect: { kind: 'error', type: 'invalid-request' },
      }),
    ],
    ['empty', 2, (_seq, id) => ({ data: Buffer.alloc(0), properties: withId(id), expect: { kind: 'error', type: 'invalid-request' } })],
    [
      'wrong-types',
      8,
      (_seq, id, rnd) => {
        const shapes = [
          '[]',
          '"text"',
          'null',
          '42',
          'true',
          '{"arguments": 12}',
          '{"arguments": "[1,2]"}',
          '{"arguments": "\\"s\\""}',
          '{"config": [1], "arguments": "{}"}',
          '{"config": "7", "arguments": "{}"}',
          '{"arguments": "{}", "user": {"name": "x"}}',
          '{"arguments": "{bad json"}',
        ];
        return { data: Buffer.from(shapes[Math.floor(rnd() * shapes.length)]!), properties: withId(id), expect: { kind: 'error', type: 'invalid-request' } };
      },
    ],
    [
      'wrong-argument-types',
      4,
      (_seq, id, rnd) => {
        const bad = [{ chunks: 'many' }, { chunks: [1, 2] }, { chunks: {} }, { text: 'x', chunks: 'NaN?' }];
        return { data: env(bad[Math.floor(rnd() * bad.length)]), properties: withId(id), expect: { kind: 'error', type: 'invalid-arguments' } };
      },
    ],
    [
      'deep-array',
      1,
      (_seq, id) => ({
        data: Buffer.from(JSON.stringify({ config: '{}', arguments: `${'['.repeat(deep)}${']'.repeat(deep)}` })),
        properties: withId(id),
        expect: { kind: 'error', type: 'invalid-request' },
      }),
    ],
    // A valid object 20,000 deep: the echo tool's JSON.stringify overflows the stack; an internal error, answered.
    [
      'deep-object',
      1,
      (_seq, id) => ({
        data: Buffer.from(JSON.stringify({ config: '{}', arguments: `${'{"a":'.repeat(deep)}1${'}'.repeat(deep)}` })),
        properties: withId(id),
        expect: { kind: 'error', type: 'tool-service-error' },
      }),
    ],
    [
      'huge-payload',
      1,
      (_seq, id) => ({
        data: env({ text: 'h'.repeat(o.maxPayloadBytes + 1024) }),
        properties: withId(id),
        expect: { kind: 'error', type: 'payload-too-large' },
      }),
    ],
    [
      'unknown-tool',
      2,
      (seq, id) => ({ data: good(seq), properties: withId(id, { [TOOL_PROPERTY]: 'no-such-tool' }), expect: { kind: 'error', type: 'unknown-tool' } }),
    ],
    ['no-id', 6, (seq, _id, rnd) => ({ data: rnd() < 0.5 ? good(seq) : Buffer.from('{"garbage'), properties: {}, expect: { kind: 'dead-letter' } })],
    ['empty-id', 2, (seq) => ({ data: good(seq), properties: { id: '' }, expect: { kind: 'dead-letter' } })],
  ];
  const weight = categories.reduce((s, [, w]) => s + w, 0);
  const out: Envelope[] = [];
  for (let seq = 0; seq < o.total; seq++) {
    let pick = r() * weight;
    let chosen = categories[0]!;
    for (const c of categories) {
      pick -= c[1];
      if (pick < 0) {
        chosen = c;
        break;
      }
    }
    const [category, , make] = chosen;
    const e = make(seq, `${o.idPrefix}-${seq}`, r);
    out.push({ seq, category, ...e, properties: { ...e.properties, 'drill-seq': String(seq) } });
  }
  return out;
}
