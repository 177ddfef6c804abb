import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src/sse/sse-parser.js';

function feed(parts: string[]): string[] {
  const p = new SseParser();
  const out: string[] = [];
  for (const part of parts) out.push(...p.push(part).map((e) => e.data));
  out.push(...p.end().map((e) => e.data));
  return out;
}

describe('SseParser', () => {
  const stream = 'data: {"a":1}\n\ndata: {"b":2}\n\n';

  it('parses whole events', () => {
    expect(feed([stream])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('gives the same events however the stream is split', () => {
    for (let size = 1; size <= stream.length; size++) {
      const parts: string[] = [];
      for (let i = 0; i < stream.length; i += size) parts.push(stream.slice(i, i + size));
      expect(feed(parts)).toEqual(['{"a":1}', '{"b":2}']);
    }
  });

  // Found by sse-parser.property.test.ts: the LF alone in its chunk left the parser still
  // waiting for one, so the next chunk's blank line was eaten and two events became one.
  it('keeps the blank line after a CRLF whose LF came alone in its chunk', () => {
    expect(feed(['data: a\r', '\n', '\ndata: b\n\n'])).toEqual(['a', 'b']);
  });

  it('accepts CRLF and CR line ends, including a CRLF split between chunks', () => {
    expect(feed(['data: x\r\n\r\ndata: y\r\r'])).toEqual(['x', 'y']);
    expect(feed(['data: x\r', '\n\r', '\ndata: z\r\n', '\r\n'])).toEqual(['x', 'z']);
  });

  it('joins multi-line data with newlines', () => {
    expect(feed(['data: line one\ndata: line two\ndata\n\n'])).toEqual(['line one\nline two\n']);
  });

  it('skips comments and unknown fields, and keeps event names and ids', () => {
    const p = new SseParser();
    const events = p.push(': ping\nretry: 100\nfoo: bar\nevent: update\nid: 7\ndata:no-space\n\n');
    expect(events).toEqual([{ event: 'update', data: 'no-space', id: '7' }]);
  });

  it('drops an event without data and a leading byte order mark', () => {
    expect(feed(['\uFEFFevent: x\n\n', 'data: kept\n\n'])).toEqual(['kept']);
  });

  it('dispatches a last event whose blank line never came', () => {
    expect(feed(['data: a\n\ndata: b'])).toEqual(['a', 'b']);
    expect(feed(['data: a\n\ndata: c\n'])).toEqual(['a', 'c']);
  });

  it('counts what it holds for an unfinished line', () => {
    const p = new SseParser();
    p.push('data: 12345');
    expect(p.pendingLength).toBe('data: 12345'.length);
    p.push('\n\n');
    expect(p.pendingLength).toBe(0);
  });
});
