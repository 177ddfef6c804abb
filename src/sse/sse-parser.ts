/** One dispatched Server-Sent Event. */
export interface SseEvent {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
}

/**
 * An incremental Server-Sent Events parser (the WHATWG rules): lines end in LF, CR or CRLF,
 * even when a chunk boundary falls between the CR and the LF; `data` lines of one event are
 * joined with "\n"; lines starting with ":" are comments; an event is dispatched at a blank
 * line, and one without data is dropped. `push` takes decoded text, so a multi-byte character
 * split across network chunks must be decoded with a streaming TextDecoder first.
 */
export class SseParser {
  private buffer = '';
  private skipLeadingLf = false;
  private started = false;
  private data: string[] = [];
  private eventType = '';
  private lastId: string | undefined;

  push(text: string): SseEvent[] {
    let input = text;
    if (!this.started && input.length > 0) {
      this.started = true;
      if (input.charCodeAt(0) === 0xfeff) input = input.slice(1);
    }
    // Only the first character after the CR can be its LF, even when it came alone in a chunk.
    if (this.skipLeadingLf && input.length > 0) {
      if (input.startsWith('\n')) input = input.slice(1);
      this.skipLeadingLf = false;
    }
    this.buffer += input;

    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 < this.buffer.length) next = this.buffer[cr + 1] === '\n' ? cr + 2 : cr + 1;
        else {
          // A CR at the very end: the LF of a CRLF may be in the next chunk.
          next = cr + 1;
          this.skipLeadingLf = true;
        }
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      this.line(this.buffer.slice(start, end), out);
      start = next;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /**
   * The stream ended. Unlike a browser, a last event missing its blank line is still
   * dispatched: Dify's own client reads the stream line by line and would act on it.
   */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer !== '') this.line(this.buffer, out);
    this.buffer = '';
    this.line('', out);
    return out;
  }

  /** Bytes held for an unfinished line or event, to bound memory against a stream with no newlines. */
  get pendingLength(): number {
    let n = this.buffer.length;
    for (const d of this.data) n += d.length;
    return n;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.eventType || 'message', data: this.data.join('\n'), id: this.lastId });
      this.data = [];
      this.eventType = '';
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastId = value;
        break;
      default:
        // `retry` and unknown fields mean nothing to a one-shot stream.
        break;
    }
  }
}
