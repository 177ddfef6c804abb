/** The transports a process may be told to use; `auto`: the native client when it loads, else the WebSocket API. */
export const TransportKind = {
  Memory: 'memory',
  Pulsar: 'pulsar',
  PulsarWs: 'pulsar-ws',
  Auto: 'auto',
} as const;
export type TransportKind = (typeof TransportKind)[keyof typeof TransportKind];
