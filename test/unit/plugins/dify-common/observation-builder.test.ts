import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { parsePluginJson } from '../../../../src/plugins/dify-common/plugin-json.js';

// Counted: the matching of JSON parts against text parts must parse each text once.
vi.mock('../../../../src/plugins/dify-common/plugin-json.js', async (load) => {
  const real = await load<typeof import('../../../../src/plugins/dify-common/plugin-json.js')>();
  return { ...real, parsePluginJson: vi.fn(real.parsePluginJson) };
});
import { PayloadTooLargeError } from '../../../../src/errors.js';
import { DiscardingBlobSink } from '../../../../src/plugins/blob-sink.js';
import type { InvokeMessage } from '../../../../src/plugins/dify-common/invoke-message.js';
import { ObservationBuilder } from '../../../../src/plugins/dify-common/observation-builder.js';

function builder(fileMaxBytes?: number): ObservationBuilder {
  return new ObservationBuilder({
    log: pino({ level: 'silent' }),
    blobSink: new DiscardingBlobSink(),
    signal: new AbortController().signal,
    limits: fileMaxBytes === undefined ? undefined : { chunkMaxBytes: 8192, fileMaxBytes },
  });
}

async function run(b: ObservationBuilder, msgs: InvokeMessage[]): Promise<string> {
  let out = '';
  for (const m of msgs) out += (await b.accept(m)).join('');
  return out + b.finish().join('');
}

describe('ObservationBuilder', () => {
  it('describes a whole blob message with its mime type and size', async () => {
    const out = await run(builder(), [
      { type: 'blob', message: { blob: Buffer.from('abc').toString('base64') }, meta: { mime_type: 'text/csv', file_name: 'a.csv' } },
    ]);
    expect(out).toBe('[file a.csv: text/csv, 3 bytes, not kept (this worker has no file store configured)]');
  });

  it('refuses a whole blob over the file limit', async () => {
    await expect(run(builder(2), [{ type: 'blob', message: { blob: Buffer.from('abc').toString('base64') }, meta: null }])).rejects.toThrow(
      PayloadTooLargeError,
    );
  });

  it('uses the context of retriever resources, describes a file marker, and gives unknown types their JSON form', async () => {
    const out = await run(builder(), [
      { type: 'retriever_resources', message: { retriever_resources: [{ content: 'c' }], context: 'ctx. ' }, meta: null },
      { type: 'file', message: { file_marker: 'file_marker' }, meta: { file: { filename: 'f.txt', mime_type: 'text/plain', url: 'https://f' } } },
      { type: 'future_kind', message: { x: 1 }, meta: null },
    ]);
    expect(out).toBe('ctx. [file f.txt: text/plain, at https://f]{"x":1}');
  });

  it('treats binary_link like a link', async () => {
    expect(await run(builder(), [{ type: 'binary_link', message: { text: 'https://b' }, meta: null }])).toBe(
      'result link: https://b. please tell user to check it.',
    );
  });
});

describe('ObservationBuilder bounds', () => {
  const json = (o: unknown): InvokeMessage => ({ type: 'json', message: { json_object: o }, meta: null });
  const text = (t: string): InvokeMessage => ({ type: 'text', message: { text: t }, meta: null });

  it('refuses JSON messages past their bound in all, instead of holding them until the end', async () => {
    const b = new ObservationBuilder({
      log: pino({ level: 'silent' }),
      blobSink: new DiscardingBlobSink(),
      signal: new AbortController().signal,
      jsonMaxBytes: 80,
    });
    await b.accept(json({ a: 'x'.repeat(40) }));
    await expect(b.accept(json({ b: 'y'.repeat(40) }))).rejects.toThrow(/JSON messages exceed 80 bytes in all/);
  });

  it('skips a JSON part equal to a text part written another way, and keeps one that differs', async () => {
    const out = await run(builder(), [text('{"b": [1, 2], "a": {"y": null, "x": "é"}}'), json({ a: { x: 'é', y: null }, b: [1, 2] }), json({ a: 1 })]);
    expect(out).toBe('{"b": [1, 2], "a": {"y": null, "x": "é"}}{"a": 1}');
  });

  it('matches many JSON parts against many texts, each text parsed once', async () => {
    const b = builder();
    vi.mocked(parsePluginJson).mockClear();
    for (let i = 0; i < 200; i++) await b.accept(text(`{"n": ${i}}`));
    for (let i = 0; i < 200; i++) await b.accept(json({ n: i }));
    expect(b.finish()).toEqual([]);
    expect(vi.mocked(parsePluginJson)).toHaveBeenCalledTimes(200);
  });
});
