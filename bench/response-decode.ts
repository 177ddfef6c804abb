/**
 * What reading a response costs the client (ToolClient, `toolwire call`, the gateway): one
 * decodeResponse (JSON.parse and the zod check of its shape) beside JSON.parse alone, over a
 * typical answer and a typical error. Run: `npm run build:bench --silent && node build/bench/response-decode.js`.
 */
import { decodeResponse } from '../src/envelope/response.js';

const DECODES = 1_000_000;
const WARMUP = 100_000;

const answer = Buffer.from(
  JSON.stringify({ error: null, response: 'The weather in Paris is 18 °C and cloudy, with light wind from the west.', end_of_stream: true }),
);
const failure = Buffer.from(JSON.stringify({ error: { type: 'tool-service-error', message: 'the tool failed' }, response: '', end_of_stream: true }));

const parseOnly = (data: Buffer): unknown => JSON.parse(data.toString('utf8'));

/** Nanoseconds a decode, after a warm-up; the result is kept so the work is not optimised away. */
function nsPerDecode(decode: (data: Buffer) => unknown, data: Buffer): number {
  const kept: unknown[] = [];
  for (let i = 0; i < WARMUP; i++) kept[i & 1023] = decode(data);
  const started = process.hrtime.bigint();
  for (let i = 0; i < DECODES; i++) kept[i & 1023] = decode(data);
  return Number(process.hrtime.bigint() - started) / DECODES;
}

for (const [name, data] of [
  ['answer', answer],
  ['error', failure],
] as const) {
  const floor = nsPerDecode(parseOnly, data);
  const full = nsPerDecode(decodeResponse, data);
  process.stdout.write(`${name}: JSON.parse ${floor.toFixed(0)} ns, decodeResponse ${full.toFixed(0)} ns (+${(full - floor).toFixed(0)} ns for the check)\n`);
}
