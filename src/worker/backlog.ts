import { Fifo } from '../async/fifo.js';
import type { IncomingMessage } from '../transport/transport.js';

/** A request the intake took, and when (`performance.now()`), for the time it waits. */
export interface Taken {
  readonly msg: IncomingMessage;
  readonly receivedAt: number;
}

/** Requests waiting for a slot, first in first out, bounded by count and by bytes. */
export class Backlog {
  private readonly items = new Fifo<Taken>();
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
  push(taken: Taken): boolean {
    if (this.items.size >= this.maxMessages || this.held + taken.msg.data.length > this.maxBytes) return false;
    this.items.push(taken);
    this.held += taken.msg.data.length;
    return true;
  }

  shift(): Taken | undefined {
    const t = this.items.shift();
    if (t) this.held -= t.msg.data.length;
    return t;
  }
}
