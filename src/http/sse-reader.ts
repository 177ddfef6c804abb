/**
 * The `data` of each Server-Sent Event in a byte stream, as it arrives. Events may be split
 * across chunks anywhere; CRLF and LF both end lines; multi-line data is joined with \n;
 * comments and other fields are skipped.
 */
export async function* readSseData(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let data: string[] = [];
  const source = body as AsyncIterable<Uint8Array>;
  for await (const chunk of source) {
    if (signal?.aborted) return;
    buffer += decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const nl = buffer.indexOf('\n', start);
      if (nl < 0) break;
      let line = buffer.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer.startsWith('data:')) data.push(buffer.slice(buffer[5] === ' ' ? 6 : 5).replace(/\r$/, ''));
  if (data.length > 0) yield data.join('\n');
}
