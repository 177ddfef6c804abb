import type { Logger } from 'pino';
import { CANCEL_PROPERTY } from '../envelope/properties.js';
import { privateSubscription } from '../transport/private-subscription.js';
import { cancelTopic } from '../transport/topic-name.js';
import type { Subscription, Transport } from '../transport/transport.js';

/** What a cancel reaches: the calls of one service instance. */
export interface Cancellable {
  /** The agent of request `id` stopped waiting: abort its calls running here. */
  cancel(id: string): unknown;
}

/**
 * Reads the cancel topic of each namespace the worker takes requests from, once per
 * namespace, and hands each cancel to what was added for that namespace only: Pulsar
 * authorizes per namespace, so who may publish on tenant-a's cancel topic may not stop
 * tenant-b's calls. A namespace's subscription closes once nothing of it is left, and opens
 * again when something comes back.
 */
export class CancelListener {
  /** Per cancel topic, this worker's subscription to it. */
  private readonly topics = new Map<string, Promise<Subscription | undefined>>();
  /** Per cancel topic, what its cancels reach. */
  private readonly targets = new Map<string, Set<Cancellable>>();
  private holds = 0;
  private closed = false;

  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
  ) {}

  /**
   * Read the cancel topic of `requestTopic`'s namespace, if nothing does yet. Best effort: a
   * worker that cannot read it still serves, and a cancelled call then ends at its timeout.
   */
  async listen(requestTopic: string): Promise<void> {
    const topic = cancelTopic(requestTopic);
    if (!topic || this.closed) return;
    let sub = this.topics.get(topic);
    if (!sub) {
      const opened: Promise<Subscription | undefined> = privateSubscription(this.transport, topic, 'toolwire-cancel', { receiverQueueSize: 1000 }).then(
        (subscription) => {
          void this.read(subscription, topic);
          return subscription;
        },
        (err: unknown) => {
          this.log.warn({ err, topic }, 'cannot read cancellations; cancelled calls run to their timeout');
          if (this.topics.get(topic) === opened) this.topics.delete(topic);
          return undefined;
        },
      );
      sub = opened;
      this.topics.set(topic, sub);
    }
    await sub;
  }

  /** From now on the cancels of `requestTopic`'s namespace reach `target`, a redelivered copy's run included. */
  add(requestTopic: string, target: Cancellable): void {
    const topic = cancelTopic(requestTopic);
    if (!topic) return;
    let set = this.targets.get(topic);
    if (!set) this.targets.set(topic, (set = new Set()));
    set.add(target);
  }

  /** `target` is done with; the namespace's subscription closes if nothing else of it is left. */
  remove(requestTopic: string, target: Cancellable): void {
    const topic = cancelTopic(requestTopic);
    const set = topic === undefined ? undefined : this.targets.get(topic);
    if (!topic || !set?.delete(target) || set.size > 0) return;
    this.targets.delete(topic);
    this.prune();
  }

  /**
   * Close nothing until the returned release is called: a reload opens subscriptions before it
   * adds what they serve, and one it is about to need must not close under it.
   */
  hold(): () => void {
    this.holds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.holds--;
      this.prune();
    };
  }

  /** Close every subscription; nothing opens again. */
  async close(): Promise<void> {
    this.closed = true;
    const subs = [...this.topics.values()];
    this.topics.clear();
    for (const sub of subs) await (await sub)?.close().catch(() => undefined);
  }

  private async read(sub: Subscription, topic: string): Promise<void> {
    try {
      for await (const m of sub) {
        void m.ack();
        const id = m.properties[CANCEL_PROPERTY];
        if (id === undefined) continue;
        const set = this.targets.get(topic);
        if (set) for (const target of set) target.cancel(id);
      }
    } catch (err) {
      this.log.warn({ err, topic }, 'cancellations no longer read');
    }
  }

  /** Close the subscriptions of namespaces nothing is left in. */
  private prune(): void {
    if (this.holds > 0 || this.closed) return;
    for (const [topic, sub] of this.topics) {
      if (this.targets.has(topic)) continue;
      this.topics.delete(topic);
      void sub.then((subscription) => subscription?.close()).catch((err: unknown) => this.log.warn({ err, topic }, 'cancel subscription close failed'));
      this.log.info({ topic }, 'no service left in the namespace; cancellations no longer read');
    }
  }
}
