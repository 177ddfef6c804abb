/**
 * One frame of the daemon's length-prefixed stream (dify-plugin-daemon
 * pkg/utils/parser/chunking.go at bdb5642a, which reads every streamed inner-API answer):
 * magic 0x0f, a reserved byte, the header length 10 (u16 LE), then a 10-byte header whose
 * first 4 bytes are the data length (u32 LE), then the data. All little endian.
 */
export function lengthPrefixed(data: string): Buffer {
  const body = Buffer.from(data, 'utf8');
  const frame = Buffer.alloc(14 + body.length);
  frame[0] = 0x0f;
  frame.writeUInt16LE(0x0a, 2);
  frame.writeUInt32LE(body.length, 4);
  body.copy(frame, 14);
  return frame;
}

/** One answer item of Dify's inner API: `{"data": T}` or `{"error": "..."}` (calldify BaseBackwardsInvocationResponse). */
export function innerFrame(item: { data: unknown } | { error: string }): Buffer {
  return lengthPrefixed(JSON.stringify('error' in item ? { data: null, error: item.error } : { data: item.data, error: '' }));
}
