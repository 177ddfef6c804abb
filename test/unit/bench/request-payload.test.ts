import { describe, expect, it } from 'vitest';
import { benchRequestBody } from '../../../bench/request-payload.js';

const argumentsOf = (body: Buffer) => (JSON.parse(body.toString()) as { arguments: string }).arguments;

describe('benchRequestBody', () => {
  it('pads the arguments JSON to the asked size and expects the text back', () => {
    const r = benchRequestBody({ argumentBytes: 1024, chunks: 0 });
    expect(argumentsOf(r.body)).toHaveLength(1024);
    expect(JSON.parse(argumentsOf(r.body))).toEqual({ text: r.expectedResponse });
  });

  it('with chunks, keeps the arguments size and the whole observation about the single size', () => {
    const r = benchRequestBody({ argumentBytes: 1024, chunks: 100 });
    const args = JSON.parse(argumentsOf(r.body)) as { text: string; chunks: number; pad: string };
    expect(argumentsOf(r.body)).toHaveLength(1024);
    expect(args.chunks).toBe(100);
    expect(r.expectedResponse).toBe(args.text.repeat(100));
    expect(r.expectedResponse.length).toBeGreaterThan(900);
    expect(r.expectedResponse.length).toBeLessThanOrEqual(1024);
  });
});
