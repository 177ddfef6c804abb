import { randomUUID } from 'node:crypto';
import { decodeResponse, type ToolResponse } from '../../src/envelope/response.js';
import { TimeoutError } from '../../src/errors.js';
import type { Subscription, Transport } from '../../src/transport/transport.js';

interface Entry {
  /** Final messages (end_of_stream, or an error) received for the id. */
  finals: ToolResponse[];
  /** Text of the chunks before the first final. */
  text: string;
  firstFinalAt: number | undefined;
}

export interface LedgerCounts {
  readonly tracked: number;
  /** Tracked ids with at least one final answer. */
  readonly answered: number;
  readonly missing: number;
  /** Final answers beyond the first, over all ids (at-least-once delivery shows here); each broker message counted once. */
  readonly duplicates: number;
  /** Copies of a message already read (the broker redelivers what it did not see acked): not answers. */
  readonly redelivered: number;
  /** Ids whose first final answer is an error. */
  readonly errorAnswers: number;
  /** Messages for ids nobody tracked. */
  readonly stray: number;
}

/**
 * The agents' side of a drill: every response on the response topic, by request id. A
 * durable subscription (a fixed name on a persistent topic) keeps answers published while
 * the agent's connection is down, so a broker restart cannot lose them on this side.
 */
export class AnswerLedger {
  private readonly entries = new Map<string, Entry>();
  private readonly tracked = new Set<string>();
  private stray = 0;
  private redelivered = 0;
  /** `<id> <messageId>` of every final read. */
  private readonly finalMessages = new Set<string>();
  private waiters: (() => void)[] = [];
  private readonly answeredWaiters = new Map<string, () => void>();
  private readonly loop: Promise<void>;

  private constructor(private readonly sub: Subscription) {
    this.loop = this.consume();
  }

  /**
   * `room`: the subscription's receiver queue. An agent that sends a burst to a non-persistent
   * topic gives its answers the same room, or the broker drops what finds none (the WebSocket
   * service caps an Exclusive subscription's at 1,000 and keeps taking as answers are acked).
   */
  static async open(transport: Transport, responseTopic: string, subscription = `drill-agent-${randomUUID()}`, room = 1000): Promise<AnswerLedger> {
    const sub = await transport.subscribe({ topic: responseTopic, subscription, type: 'Exclusive', receiverQueueSize: room });
    return new AnswerLedger(sub);
  }

  private async consume(): Promise<void> {
    for await (const msg of this.sub) {
      void msg.ack();
      const id = msg.properties['id'];
      if (id === undefined || !this.tracked.has(id)) {
        this.stray++;
        continue;
      }
      let r: ToolResponse;
      try {
        r = decodeResponse(msg.data);
      } catch {
        r = { error: { type: 'undecodable', message: 'the response is not JSON' }, response: '', endOfStream: true };
      }
      let e = this.entries.get(id);
      if (!e) {
        e = { finals: [], text: '', firstFinalAt: undefined };
        this.entries.set(id, e);
      }
      if (r.endOfStream || r.error) {
        const key = `${id} ${msg.messageId}`;
        if (this.finalMessages.has(key)) {
          this.redelivered++;
          continue;
        }
        this.finalMessages.add(key);
        if (e.finals.length === 0) {
          e.text += r.response;
          e.firstFinalAt = Date.now();
          this.answeredWaiters.get(id)?.();
          this.answeredWaiters.delete(id);
        }
        e.finals.push(r);
      } else if (e.finals.length === 0) {
        e.text += r.response;
      }
      for (const w of this.waiters.splice(0)) w();
    }
  }

  /** Expect an answer for `id` (call before sending it). */
  track(id: string): void {
    this.tracked.add(id);
  }

  /** Resolves when `id` has its first final answer (at once if it has one). */
  whenAnswered(id: string): Promise<void> {
    if (this.answer(id)) return Promise.resolve();
    return new Promise((resolve) => this.answeredWaiters.set(id, resolve));
  }

  /** The first final answer and the whole text up to it, or undefined. */
  answer(id: string): { final: ToolResponse; text: string; finals: number; at: number } | undefined {
    const e = this.entries.get(id);
    if (!e || e.finals.length === 0) return undefined;
    return { final: e.finals[0]!, text: e.text, finals: e.finals.length, at: e.firstFinalAt ?? 0 };
  }

  counts(): LedgerCounts {
    let answered = 0;
    let duplicates = 0;
    let errorAnswers = 0;
    for (const id of this.tracked) {
      const e = this.entries.get(id);
      if (!e || e.finals.length === 0) continue;
      answered++;
      duplicates += e.finals.length - 1;
      if (e.finals[0]!.error) errorAnswers++;
    }
    return {
      tracked: this.tracked.size,
      answered,
      missing: this.tracked.size - answered,
      duplicates,
      errorAnswers,
      stray: this.stray,
      redelivered: this.redelivered,
    };
  }

  missingIds(): string[] {
    return [...this.tracked].filter((id) => !this.answer(id));
  }

  /** Wait until `pred` holds, re-checking on every response; throws TimeoutError after `timeoutMs`. */
  async waitFor(pred: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (signal?.aborted) throw signal.reason;
      const left = deadline - Date.now();
      if (left <= 0) throw new TimeoutError(`condition not met within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    await this.sub.close();
    await this.loop.catch(() => undefined);
  }
}
