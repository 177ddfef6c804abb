import { Fifo } from '../transport/fifo.js';
import type { IncomingMessage } from '../transport/transport.js';

/** Requests waiting for a slot, first in first out, bounded by count and by bytes. */
export class Backlog {
  private readonly items = new Fifo<IncomingMessage>();
  private held = 0;

  constructor(
    private readonly maxMessages: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.items.size;
  }

  /** Request bytes held. */
  get bytes(): number {
    return this.held;
  }

  /** False when the message would not fit: the caller must answer it some other way. */
  push(msg: IncomingMessage): boolean {
    if (this.items.size >= this.maxMessages || this.held + msg.data.length > this.maxBytes) return false;
    this.items.push(msg);
    this.held += msg.data.length;
    return true;
  }

  shift(): IncomingMessage | undefined {
    const msg = this.items.shift();
    if (msg) this.held -= msg.data.length;
    return msg;
  }
}
