import type {
  NativeClient,
  NativeClientConfig,
  NativeConsumer,
  NativeConsumerConfig,
  NativeMessage,
  NativeMessageId,
  NativeProducer,
  NativeProducerConfig,
  PulsarClientModule,
} from '../../src/transport/pulsar-native-client.js';

/** Stands in for the parts of npm pulsar-client the native transport uses (it cannot install here). */
export function fakeMessage(data: string, properties: Record<string, string> = {}, redeliveryCount = 0, id = data): NativeMessage {
  return {
    getData: () => Buffer.from(data),
    getProperties: () => properties,
    getMessageId: () => ({ toString: () => id }),
    getRedeliveryCount: () => redeliveryCount,
    // A fixed time: the key of one message stays the same on every read, as the broker's does.
    getPublishTimestamp: () => 1_790_000_000_000,
    getTopicName: () => 'persistent://public/default/t',
  };
}

export class FakeConsumer implements NativeConsumer {
  readonly acked: NativeMessage[] = [];
  readonly nacked: NativeMessage[] = [];
  readonly backlog: NativeMessage[] = [];
  closed = false;
  /** receive(timeout) calls: each holds a threadpool thread for its wait in the real client. */
  threadpoolReceives = 0;
  private waiter: { resolve: (m: NativeMessage) => void; reject: (e: Error) => void; timer: NodeJS.Timeout | undefined } | undefined;

  constructor(readonly config: NativeConsumerConfig) {}

  /** Pending batchReceive() calls, oldest first, each with its timer. */
  private batchWaiters: { resolve: (m: NativeMessage[]) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] = [];
  batchReceives = 0;

  private get batchMax(): number {
    return this.config.batchReceivePolicy?.maxNumMessages ?? Infinity;
  }

  deliver(m: NativeMessage): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      clearTimeout(w.timer);
      w.resolve(m);
    } else {
      this.backlog.push(m);
      if (this.backlog.length >= this.batchMax) this.completeBatch();
    }
  }

  private completeBatch(): void {
    const b = this.batchWaiters.shift();
    if (!b) return;
    clearTimeout(b.timer);
    b.resolve(this.backlog.splice(0, this.batchMax));
  }

  /**
   * As libpulsar 4.2.0 behaves (lib/ConsumerImplBase.cc, ConsumerImpl.cc): a batch receive
   * answers at once when the policy's count is queued; otherwise it waits until that many are
   * queued or its timeout passes, then takes what is queued, which may be nothing. A pending
   * receive() is served before the queue (executeNotifyCallback), so a message arriving while
   * both wait goes to it. Closing fails pending batches with AlreadyClosed. (Counts only: the
   * fake's messages have no size.)
   */
  batchReceive(): Promise<NativeMessage[]> {
    this.batchReceives++;
    if (this.closed) return Promise.reject(new Error('Failed to batch receive message: AlreadyClosed'));
    if (this.backlog.length >= this.batchMax) return Promise.resolve(this.backlog.splice(0, this.batchMax));
    return new Promise((resolve, reject) => {
      const entry = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.batchWaiters = this.batchWaiters.filter((x) => x !== entry);
          resolve(this.backlog.splice(0, this.batchMax));
        }, this.config.batchReceivePolicy?.timeoutMs ?? 100),
      };
      this.batchWaiters.push(entry);
      this.noteWaiting();
    });
  }

  /**
   * As pulsar-client 1.18 behaves (src/Consumer.cc): receive() waits, asynchronously in the C++
   * client, until a message comes or the consumer closes. receive(timeout) runs as a threadpool
   * worker that holds its thread for the wait (counted here) and fails with TimeOut; a timeout
   * of 0 is not "at once" there but a receive that waits for ever. A timed receive beside a
   * pending one finds what is queued; what arrives later goes to the pending one.
   */
  /** receive() calls without a timeout: each is one of pulsar-client's promises, settled through a handle of its own. */
  asyncReceives = 0;

  /** Batch receives waiting for messages or their timeout. */
  get pendingBatches(): number {
    return this.batchWaiters.length;
  }

  /** The most receives and batch receives that ever waited at once. */
  peakWaiting = 0;

  private noteWaiting(): void {
    this.peakWaiting = Math.max(this.peakWaiting, this.batchWaiters.length + (this.waiter ? 1 : 0));
  }

  receive(timeoutMs?: number): Promise<NativeMessage> {
    if (timeoutMs !== undefined) this.threadpoolReceives++;
    else this.asyncReceives++;
    if (this.closed) return Promise.reject(new Error('Failed to receive message: AlreadyClosed'));
    const m = this.backlog.shift();
    if (m) return Promise.resolve(m);
    if (timeoutMs !== undefined && timeoutMs > 0 && this.waiter) {
      return new Promise((_, reject) => setTimeout(() => reject(new Error('Failed to receive message: TimeOut')), timeoutMs));
    }
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined || timeoutMs === 0
          ? undefined
          : setTimeout(() => {
              this.waiter = undefined;
              reject(new Error('Failed to receive message: TimeOut'));
            }, timeoutMs);
      this.waiter = { resolve, reject, timer };
      this.noteWaiting();
    });
  }

  async acknowledge(m: NativeMessage): Promise<null> {
    this.acked.push(m);
    return null;
  }

  negativeAcknowledge(m: NativeMessage): void {
    this.nacked.push(m);
  }

  async close(): Promise<null> {
    this.closed = true;
    for (const b of this.batchWaiters.splice(0)) {
      clearTimeout(b.timer);
      b.reject(new Error('Failed to batch receive message: AlreadyClosed'));
    }
    const w = this.waiter;
    this.waiter = undefined;
    if (w) {
      clearTimeout(w.timer);
      w.reject(new Error('Failed to receive message: AlreadyClosed'));
    }
    return null;
  }

  unsubscribed = false;
  async unsubscribe(): Promise<null> {
    this.unsubscribed = true;
    return this.close();
  }

  isConnected(): boolean {
    return !this.closed;
  }
}

export class FakeProducer implements NativeProducer {
  readonly sent: { data: Buffer; properties?: Record<string, string> }[] = [];
  failWith: Error | undefined;
  closed = false;
  constructor(readonly config: NativeProducerConfig) {}
  /** While set, sends stay unconfirmed until release(). */
  hold = false;
  flushes = 0;
  private held: (() => void)[] = [];
  /**
   * The next this many sends are confirmed as the broker confirms a non-persistent publish it
   * dropped: ledger and entry -1 (ServerCnx), printed as pulsar-client prints ids.
   */
  dropNext = 0;
  async send(m: { data: Buffer; properties?: Record<string, string> }): Promise<NativeMessageId> {
    if (this.failWith) throw this.failWith;
    this.sent.push(m);
    const dropped = this.dropNext > 0;
    if (dropped) this.dropNext--;
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    const id = dropped ? '(-1,-1,-1,0)' : `(0,0,-1,${this.sent.length})`;
    return { toString: () => id };
  }
  release(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }
  async flush(): Promise<null> {
    this.flushes++;
    return null;
  }
  async close(): Promise<null> {
    this.closed = true;
    return null;
  }
  isConnected(): boolean {
    return !this.closed;
  }
}

export class FakeClient implements NativeClient {
  static last: FakeClient | undefined;
  /** Every client made, oldest first (the transport makes more than one for non-persistent subscriptions). */
  static readonly made: FakeClient[] = [];
  readonly consumers: FakeConsumer[] = [];
  readonly producers: FakeProducer[] = [];
  closed = false;
  /**
   * libpulsar's result name to fail the next subscribe and producer with, in the binding's own
   * words (pulsar-client's Producer.cc and Consumer.cc: "Failed to create producer: " / "Failed to create
   * consumer: " and pulsar_result_str, e.g. AuthorizationError).
   */
  refuseWith: string | undefined;
  constructor(readonly config: NativeClientConfig) {
    FakeClient.last = this;
    FakeClient.made.push(this);
  }
  async createProducer(config: NativeProducerConfig): Promise<FakeProducer> {
    if (this.refuseWith) throw new Error(`Failed to create producer: ${this.refuseWith}`);
    const p = new FakeProducer(config);
    this.producers.push(p);
    return p;
  }
  async subscribe(config: NativeConsumerConfig): Promise<FakeConsumer> {
    if (this.refuseWith) throw new Error(`Failed to create consumer: ${this.refuseWith}`);
    const c = new FakeConsumer(config);
    this.consumers.push(c);
    return c;
  }
  /** Runs as close() resolves: libpulsar's threads go on after it (they log the end of connections). */
  afterClose: (() => void) | undefined;
  async close(): Promise<null> {
    this.closed = true;
    this.afterClose?.();
    return null;
  }
}

export class FakeAuthenticationToken {
  constructor(readonly params: { token: string | (() => Promise<string>) }) {}
}

export const fakeModule: PulsarClientModule = { Client: FakeClient, AuthenticationToken: FakeAuthenticationToken };

/** As an ESM import of the CommonJS package looks: the exports under `default`. */
export const fakeImporter = async (): Promise<unknown> => ({ default: fakeModule });
