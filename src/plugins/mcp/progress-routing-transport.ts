import type { Transport as McpTransport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCNotification, type JSONRPCMessage, type MessageExtraInfo, type Progress } from '@modelcontextprotocol/sdk/types.js';

/** Listeners of the calls in flight, by the progress token each call sent in `_meta`. */
export type ProgressListeners = Map<string, (progress: Progress) => void>;

/**
 * Wraps the transport to an MCP server and hands each progress notification of a call in
 * `listeners` to its listener the moment it is read, so it comes before that call's result.
 * The SDK's client (1.32) dispatches a notification a microtask after reading it but a result
 * at once, and forgets the call's progress handler with the result: progress read in the same
 * chunk as the result was dropped as an unknown token (typescript-sdk#2580), and under load a
 * streamed answer lost its last chunks. Every other message passes through unchanged.
 */
export class ProgressRoutingTransport implements McpTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  constructor(
    private readonly inner: McpTransport,
    private readonly listeners: ProgressListeners,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (err) => this.onerror?.(err);
    inner.onmessage = (message, extra) => {
      if (isJSONRPCNotification(message) && message.method === 'notifications/progress') {
        const listener = this.listeners.get(String(message.params?.['progressToken']));
        if (listener) return listener(message.params as Progress);
      }
      this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}
