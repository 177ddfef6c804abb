/**
 * Properties of the Server-Sent Events parser (fast-check). The seed is random and printed;
 * replay a failure with `TOOLWIRE_FC_SEED=<seed> npx vitest run --project unit test/unit/sse/sse-parser.property.test.ts`.
 *
 * Two references: a model of the WHATWG event-stream rules written here from the
 * specification (https://html.spec.whatwg.org/multipage/server-sent-events.html, "Parsing an
 * event stream" and "Interpreting an event stream"), and `eventsource-parser` (npm, the parser
 * the MCP SDK reads SSE with) as an independent oracle for the events and their data.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../../../src/sse/sse-parser.js';
import { readSseData } from '../../../src/sse/sse-reader.js';
import { checkAsyncProperty, checkProperty, PROPERTY_TIMEOUT_MS } from '../../support/properties.js';

/**
 * The specification's steps over a whole decoded stream. `dispatchAtEnd`: our one deliberate
 * difference (sse-parser.ts `end()`): at the end of the stream a last line without its end
 * is read, and the event in progress is dispatched, where a browser discards both.
 */
function referenceEvents(text: string, dispatchAtEnd: boolean): SseEvent[] {
  const stream = text.startsWith('\ufeff') ? text.slice(1) : text;
  const lines = stream.split(/\r\n|\r|\n/);
  // The last piece has no line end: a line only if the stream ends here and we read it.
  const unterminated = lines.pop()!;
  if (dispatchAtEnd) lines.push(unterminated, '');
  const events: SseEvent[] = [];
  let data = '';
  let eventType = '';
  let lastEventId: string | undefined;
  for (const line of lines) {
    if (line === '') {
      if (data !== '') events.push({ event: eventType || 'message', data: data.endsWith('\n') ? data.slice(0, -1) : data, id: lastEventId });
      data = '';
      eventType = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data += `${value}\n`;
    else if (field === 'event') eventType = value;
    else if (field === 'id' && !value.includes('\u0000')) lastEventId = value;
  }
  return events;
}

/** Text of a field value: anything but a line end, weighted towards what parsers trip on. */
const valueText = fc.string({
  unit: fc.oneof(
    { arbitrary: fc.constantFrom('a', 'b', ' ', ':', '\u0000', 'é', '€', '😀', '\ufeff', '\u2028'), weight: 3 },
    { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\r' && c !== '\n'), weight: 1 },
  ),
  maxLength: 12,
});

const line = fc.oneof(
  {
    arbitrary: fc
      .tuple(fc.constantFrom('data', 'event', 'id', 'retry', 'dat', 'DATA', 'data ', ''), fc.constantFrom('', ':', ': ', ':  '), valueText)
      .map(([f, sep, v]) => `${f}${sep}${sep === '' ? '' : v}`),
    weight: 6,
  },
  { arbitrary: valueText.map((v) => `:${v}`), weight: 1 },
  { arbitrary: fc.constant(''), weight: 3 },
);

/** An event stream: lines with any mix of line ends, maybe a byte order mark, maybe a last line without its end. */
const eventStream = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(line, fc.constantFrom('\n', '\r', '\r\n')), { maxLength: 14 }), fc.option(line, { nil: undefined }))
  .map(([bom, lines, tail]) => `${bom ? '\ufeff' : ''}${lines.map(([l, end]) => l + end).join('')}${tail ?? ''}`);

/** Cut points for a sequence of `length` items: sorted, distinct, inside it. */
function pieces<T extends { slice(a: number, b?: number): T; length: number }>(whole: T, cuts: number[]): T[] {
  const at = [...new Set(cuts.map((c) => (whole.length === 0 ? 0 : c % (whole.length + 1))))].sort((a, b) => a - b);
  const out: T[] = [];
  let from = 0;
  for (const c of at) {
    out.push(whole.slice(from, c));
    from = c;
  }
  out.push(whole.slice(from));
  return out;
}

function parseInPieces(parts: string[]): { pushed: SseEvent[]; ended: SseEvent[] } {
  const p = new SseParser();
  const pushed = parts.flatMap((part) => p.push(part));
  return { pushed, ended: p.end() };
}

/**
 * The oracle: eventsource-parser, fed the same pieces. It neither reads a last line without
 * its end nor dispatches at the end of a stream, and it holds a CR that ends a piece until a
 * later piece has a line end: so both parsers get a last piece that ends the stream's last
 * line and event ("\n\n"; after a CR, its LF and a blank line).
 */
function oracleEvents(parts: string[]): { event: string; data: string }[] {
  const out: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => out.push(e) });
  // It strips a byte order mark only as undecoded bytes (EF BB BF read as three chars): give it the text after one.
  parts.forEach((part, i) => parser.feed(i === 0 || parts.slice(0, i).join('') === '' ? part.replace(/^\ufeff/, '') : part));
  return out.map((e) => ({ event: e.event ?? 'message', data: e.data }));
}

describe('SseParser (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('gives the events of the WHATWG rules however the text is split, a CR and its LF included', () => {
    checkProperty(
      'SseParser: split invariance against the WHATWG model',
      fc.property(eventStream, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        const { pushed, ended } = parseInPieces(pieces(text, cuts));
        expect(pushed).toEqual(referenceEvents(text, false));
        expect([...pushed, ...ended]).toEqual(referenceEvents(text, true));
      }),
      2_000,
    );
  });

  it('dispatches the events and data that eventsource-parser does, for the same pieces', () => {
    checkProperty(
      'SseParser: eventsource-parser as oracle',
      fc.property(eventStream, fc.array(fc.nat(), { maxLength: 12 }), (text, cuts) => {
        const parts = [...pieces(text, cuts), '\n\n'];
        const { pushed } = parseInPieces(parts);
        expect(pushed.map((e) => ({ event: e.event, data: e.data }))).toEqual(oracleEvents(parts));
      }),
      1_000,
    );
  });
});

async function* chunksOf(parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield p;
}

async function dataOf(parts: Uint8Array[]): Promise<string[]> {
  const out: string[] = [];
  for await (const d of readSseData(chunksOf(parts))) out.push(d);
  return out;
}

describe('readSseData (properties)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('gives the same data for any split of the bytes, inside a multi-byte character or a CRLF, and for invalid UTF-8', async () => {
    const badBytes = fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf0, 0x9f]));
    await checkAsyncProperty(
      'readSseData: byte split invariance',
      fc.asyncProperty(
        eventStream,
        fc.option(fc.tuple(badBytes, fc.nat()), { nil: undefined }),
        fc.array(fc.nat(), { maxLength: 16 }),
        async (text, bad, cuts) => {
          let bytes: Buffer = Buffer.from(text, 'utf8');
          if (bad) {
            const at = bad[1] % (bytes.length + 1);
            bytes = Buffer.concat([bytes.subarray(0, at), bad[0], bytes.subarray(at)]);
          }
          const expected = referenceEvents(new TextDecoder('utf-8').decode(bytes), true).map((e) => e.data);
          expect(await dataOf(pieces(bytes, cuts).map((b) => new Uint8Array(b)))).toEqual(expected);
        },
      ),
      1_000,
    );
  });
});
