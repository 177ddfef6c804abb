import type { IncomingMessage } from '../transport/transport.js';

/** Requests waiting for a slot, first in first out, bounded by count and by bytes. */
export class Backlog {
  private items: IncomingMessage[] = [];
  private head = 0;
  private held = 0;

  constructor(
    private readonly maxMessages: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.items.length - this.head;
  }

  /** Request bytes held. */
  get bytes(): number {
    return this.held;
  }

  /** False when the message would not fit: the caller must answer it some other way. */
  push(msg: IncomingMessage): boolean {
    if (this.size >= this.maxMessages || this.held + msg.data.length > this.maxBytes) return false;
    this.items.push(msg);
    this.held += msg.data.length;
    return true;
  }

  shift(): IncomingMessage | undefined {
    if (this.size === 0) return undefined;
    const msg = this.items[this.head++]!;
    this.held -= msg.data.length;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return msg;
  }
}
