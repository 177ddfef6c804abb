import type { Logger } from 'pino';
import { AbortedError, PayloadTooLargeError, TransportError } from '../errors.js';
import { PulsarWsConnection, type PulsarWsLinkSettings } from './pulsar-ws-connection.js';
import { Backoff } from '../async/backoff.js';
import { DROP_RETRY, droppedTooOften, isDroppedWsReceipt } from './dropped-publish.js';
import { Fifo } from '../async/fifo.js';
import { endpointUrl } from './pulsar-ws-endpoint.js';
import { isPersistentTopic } from './topic-name.js';
import { toBuffer, type OutgoingMessage, type Producer } from './transport.js';

export interface PulsarWsProducerSettings extends PulsarWsLinkSettings {
  /** `ws(s)://host:port` */
  readonly base: string;
  /** A send not confirmed within this fails (reconnect time included). */
  readonly sendTimeoutMs: number;
  /** Sends written and not yet confirmed; more wait here in order. */
  readonly maxPendingSends: number;
  /** The same bound for a non-persistent topic, where the broker drops a publish past its own. */
  readonly nonPersistentInFlight: number;
  /** Told of each publish the broker dropped and that is sent again. */
  readonly onDropped: (topic: string, attempt: number) => void;
  /** The broker's text frame limit (webSocketMaxTextFrameSize, 1 MiB by default). */
  readonly maxFrameBytes: number;
  /** How long close() waits for outstanding sends before failing them. */
  readonly closeTimeoutMs: number;
}

interface PendingSend {
  readonly context: string;
  readonly frame: string;
  readonly deadline: number;
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** Connection generation it was last written on; 0 while only queued here. */
  writtenOn: number;
  done: boolean;
  /** Non-persistent topics: the broker dropped it this often; it waits here to be written again. */
  drops: Backoff | undefined;
  resend: NodeJS.Timeout | undefined;
}

interface ProducerReply {
  readonly result?: unknown;
  readonly context?: unknown;
  readonly errorMsg?: unknown;
  readonly messageId?: unknown;
}

/** JSON and base64 overhead of a frame besides payload and properties. */
const FRAME_OVERHEAD_BYTES = 64;

function hasKeys(record: Readonly<Record<string, string>>): boolean {
  for (const _ in record) return true;
  return false;
}

/**
 * A producer over Pulsar's WebSocket producer endpoint. Sends are pipelined: each frame
 * carries a `context`, the broker answers each with the same context, and up to
 * `maxPendingSends` are outstanding at once (`nonPersistentInFlight` on a non-persistent
 * topic), the rest waiting here in order.
 *
 * While the socket is down sends queue and wait (bounded by `sendTimeoutMs` and their
 * AbortSignal). After a reconnect every unconfirmed send is written again in its original
 * order: a message the broker stored just before the socket dropped is then published
 * twice, the usual at-least-once trade (Pulsar's own clients resend the same way).
 */
export class PulsarWsProducer implements Producer {
  private readonly conn: PulsarWsConnection;
  private readonly log: Logger;
  /** Unconfirmed sends in send order (Map keeps insertion order). */
  private readonly pending = new Map<string, PendingSend>();
  private backlog = new Fifo<PendingSend>();
  private inFlight = 0;
  private seq = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private drained: (() => void) | undefined;
  /** Sends in flight at most; lower on a non-persistent topic. */
  private readonly window: number;
  private readonly nonPersistent: boolean;

  private constructor(
    readonly topic: string,
    private readonly settings: PulsarWsProducerSettings,
  ) {
    this.log = settings.log.child({ topic });
    this.nonPersistent = !isPersistentTopic(topic);
    this.window = this.nonPersistent ? Math.min(settings.maxPendingSends, settings.nonPersistentInFlight) : settings.maxPendingSends;
    this.conn = new PulsarWsConnection({
      ...settings,
      url: endpointUrl(settings.base, 'producer', topic, undefined, {}),
      role: 'producer',
      topic,
      log: this.log,
      handlers: {
        onOpen: (generation) => this.onOpen(generation),
        onMessage: (text) => this.onReply(text),
        onDown: () => undefined,
      },
    });
  }

  static async open(topic: string, settings: PulsarWsProducerSettings, signal?: AbortSignal): Promise<PulsarWsProducer> {
    const p = new PulsarWsProducer(topic, settings);
    await p.conn.open(signal);
    return p;
  }

  get isConnected(): boolean {
    return this.conn.isOpen;
  }

  send(message: OutgoingMessage, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new TransportError(`pulsar-ws: producer for ${this.topic} is closed`, { retriable: false }));
    if (signal?.aborted) return Promise.reject(new AbortedError(`send to ${this.topic} aborted`, { cause: signal.reason }));
    const data = toBuffer(message.data);
    const props = message.properties;
    const propsJson = props !== undefined && hasKeys(props) ? JSON.stringify(props) : undefined;
    // Size check before encoding: base64 length is known from the byte count.
    const frameBytes = 4 * Math.ceil(data.length / 3) + (propsJson === undefined ? 0 : Buffer.byteLength(propsJson)) + FRAME_OVERHEAD_BYTES;
    if (frameBytes > this.settings.maxFrameBytes) {
      return Promise.reject(
        new PayloadTooLargeError(
          `message of ${data.length} bytes for ${this.topic} exceeds the WebSocket frame limit of ${this.settings.maxFrameBytes} bytes after base64 (about ${Math.floor(((this.settings.maxFrameBytes - FRAME_OVERHEAD_BYTES) * 3) / 4)} bytes of payload)`,
        ),
      );
    }
    const context = (++this.seq).toString(36);
    // Built by hand so the large base64 string is not scanned again by JSON.stringify
    // (base64 and the context never need escaping).
    const b64 = data.toString('base64');
    const frame =
      propsJson === undefined ? `{"payload":"${b64}","context":"${context}"}` : `{"payload":"${b64}","properties":${propsJson},"context":"${context}"}`;
    return new Promise<void>((resolve, reject) => {
      const p: PendingSend = {
        context,
        frame,
        deadline: Date.now() + this.settings.sendTimeoutMs,
        resolve,
        reject,
        signal,
        onAbort: undefined,
        writtenOn: 0,
        done: false,
        drops: undefined,
        resend: undefined,
      };
      if (signal !== undefined) {
        p.onAbort = () => this.fail(p, new AbortedError(`send to ${this.topic} aborted`, { cause: signal.reason }));
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      this.pending.set(context, p);
      this.backlog.push(p);
      this.startSweeper();
      this.flush();
    });
  }

  /** Write queued sends while the window has room and the socket is up. */
  private flush(): void {
    const gen = this.conn.generation;
    for (let p = this.backlog.peek(); p !== undefined && this.inFlight < this.window; p = this.backlog.peek()) {
      if (p.done) {
        this.backlog.shift();
        continue;
      }
      if (!this.conn.send(p.frame)) break; // down: onOpen flushes again
      this.backlog.shift();
      p.writtenOn = gen;
      this.inFlight++;
    }
  }

  private onOpen(generation: number): void {
    if (generation > 1) {
      // Replies for frames written on the old socket will never come: write them all again.
      this.inFlight = 0;
      this.backlog = new Fifo<PendingSend>();
      for (const p of this.pending.values()) {
        clearTimeout(p.resend);
        p.resend = undefined;
        this.backlog.push(p);
      }
      if (this.backlog.size > 0) this.log.debug({ resending: this.backlog.size }, 'pulsar-ws producer reconnected; resending unconfirmed messages');
    }
    this.flush();
  }

  private onReply(text: string): void {
    let r: ProducerReply;
    try {
      r = JSON.parse(text) as ProducerReply;
    } catch (err) {
      this.log.warn({ err }, 'pulsar-ws producer got a reply that is not JSON');
      return;
    }
    const p = typeof r.context === 'string' ? this.pending.get(r.context) : undefined;
    if (p === undefined) {
      // Timed out or aborted already, or a reply without context (a send we did not make).
      if (typeof r.context !== 'string') this.log.warn({ result: r.result, errorMsg: r.errorMsg }, 'pulsar-ws producer reply without context');
      return;
    }
    if (r.result === 'ok' && this.nonPersistent && isDroppedWsReceipt(r.messageId)) {
      this.dropped(p);
      return;
    }
    this.finish(p);
    if (r.result === 'ok') {
      p.resolve();
    } else {
      const detail = typeof r.errorMsg === 'string' && r.errorMsg ? `: ${r.errorMsg}` : '';
      p.reject(new TransportError(`pulsar-ws: the broker refused a message for ${this.topic}: ${String(r.result)}${detail}`));
    }
    this.flush();
  }

  /**
   * A non-persistent publish the broker dropped reached nobody (the WebSocket service's one
   * connection carries every WebSocket client's publishes, so our window alone cannot prevent
   * it): written again after a pause, behind what was queued meanwhile, until its deadline.
   */
  private dropped(pending: PendingSend): void {
    pending.drops ??= new Backoff({ initialDelayMs: DROP_RETRY.initialDelayMs, maxDelayMs: DROP_RETRY.maxDelayMs });
    const delayMs = pending.drops.next();
    const attempt = pending.drops.attempts;
    this.settings.onDropped(this.topic, attempt);
    if (Date.now() + delayMs >= pending.deadline) {
      this.fail(pending, droppedTooOften('pulsar-ws', this.topic, attempt, this.settings.sendTimeoutMs));
      return;
    }
    if (pending.writtenOn === this.conn.generation) this.inFlight--;
    pending.writtenOn = 0;
    pending.resend = setTimeout(() => {
      pending.resend = undefined;
      if (pending.done) return;
      this.backlog.push(pending);
      this.flush();
    }, delayMs);
    this.flush();
  }

  private fail(pending: PendingSend, err: Error): void {
    if (pending.done) return;
    this.finish(pending);
    pending.reject(err);
    this.flush();
  }

  private finish(pending: PendingSend): void {
    pending.done = true;
    this.pending.delete(pending.context);
    if (pending.writtenOn !== 0 && pending.writtenOn === this.conn.generation) this.inFlight--;
    clearTimeout(pending.resend);
    if (pending.onAbort !== undefined) pending.signal?.removeEventListener('abort', pending.onAbort);
    pending.signal = undefined;
    if (this.pending.size === 0) {
      this.stopSweeper();
      this.drained?.();
    }
  }

  /** One timer for all sends: deadlines grow in send order, so a sweep stops at the first live one. */
  private startSweeper(): void {
    if (this.sweeper !== undefined) return;
    const every = Math.max(10, Math.min(1000, Math.floor(this.settings.sendTimeoutMs / 4)));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  private stopSweeper(): void {
    if (this.sweeper !== undefined) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const p of this.pending.values()) {
      if (p.deadline > now) break;
      const why = this.conn.isOpen ? '' : ' (the broker is unreachable; reconnecting)';
      this.fail(p, new TransportError(`pulsar-ws: send to ${this.topic} not confirmed within ${this.settings.sendTimeoutMs} ms${why}`));
    }
  }

  /** Refuse new sends, give outstanding ones `closeTimeoutMs` to be confirmed, then close. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.doClose();
    return this.closing;
  }

  private async doClose(): Promise<void> {
    this.closed = true;
    if (this.pending.size > 0 && this.conn.isOpen) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.settings.closeTimeoutMs);
        timer.unref();
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (const p of this.pending.values()) {
      this.fail(p, new TransportError(`pulsar-ws: producer for ${this.topic} closed before the broker confirmed the send`));
    }
    this.stopSweeper();
    await this.conn.close();
  }
}
