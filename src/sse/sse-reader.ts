import { SseParser } from './sse-parser.js';

/** The `data` of each Server-Sent Event in a byte stream, as events complete. */
export async function* readSseData(body: AsyncIterable<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  for await (const chunk of body) {
    if (signal?.aborted) return;
    for (const ev of parser.push(decoder.decode(chunk, { stream: true }))) yield ev.data;
  }
  for (const ev of [...parser.push(decoder.decode()), ...parser.end()]) yield ev.data;
}
