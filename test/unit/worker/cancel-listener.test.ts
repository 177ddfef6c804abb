/**
 * The cancel listener on the memory transport: one subscription per namespace of the request
 * topics served, each cancel handed only to what serves that namespace, and the subscription
 * closed once nothing of its namespace is left.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { CANCEL_PROPERTY } from '../../../src/envelope/properties.js';
import { TransportError } from '../../../src/errors.js';
import { cancelTopic } from '../../../src/transport/topic-name.js';
import { MemoryTransport } from '../../../src/transport/memory-transport.js';
import type { SubscribeOptions, Subscription } from '../../../src/transport/transport.js';
import { CancelListener, type Cancellable } from '../../../src/worker/cancel-listener.js';
import { captureLogger } from '../../support/harness.js';

const A = 'persistent://tenant-a/tools/slow-request';
const A2 = 'non-persistent://tenant-a/tools/other-request';
const B = 'persistent://tenant-b/tools/slow-request';

let transport: MemoryTransport;
let listener: CancelListener | undefined;
afterEach(async () => {
  await listener?.close();
  await transport.close();
  listener = undefined;
});

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(5);
  }
}

function start(t = new MemoryTransport()): { listener: CancelListener; lines: () => string[] } {
  transport = t;
  const { log, lines } = captureLogger();
  listener = new CancelListener(transport, log);
  return { listener, lines };
}

/** A target that records the ids it was asked to cancel. */
function target(): Cancellable & { ids: string[] } {
  const ids: string[] = [];
  return { ids, cancel: (id: string) => ids.push(id) };
}

const readers = (requestTopic: string) => transport.subscriptionNames(cancelTopic(requestTopic)!).length;

async function cancel(requestTopic: string, properties: Record<string, string>): Promise<void> {
  await (await transport.producer(cancelTopic(requestTopic)!)).send({ data: '', properties });
}

describe('CancelListener', () => {
  it('hands a cancel only to what serves the namespace it was published in', async () => {
    const { listener } = start();
    const a = target();
    const b = target();
    await listener.listen(A);
    await listener.listen(B);
    listener.add(A, a);
    listener.add(B, b);
    await cancel(A, { [CANCEL_PROPERTY]: 'same-id' });
    await cancel(B, { [CANCEL_PROPERTY]: 'b-only' });
    await until(() => a.ids.length === 1 && b.ids.length === 1, 'both namespaces heard');
    expect(a.ids).toEqual(['same-id']);
    expect(b.ids).toEqual(['b-only']);
  });

  it('hands a cancel to every target of the namespace, and skips a message without an id', async () => {
    const { listener } = start();
    const first = target();
    const second = target();
    await listener.listen(A);
    listener.add(A, first);
    listener.add(A2, second);
    await cancel(A, {});
    await cancel(A2, { [CANCEL_PROPERTY]: 'one-id' });
    await until(() => first.ids.length === 1 && second.ids.length === 1, 'both targets heard');
    expect([first.ids, second.ids]).toEqual([['one-id'], ['one-id']]);
  });

  it('reads each namespace once, however many of its request topics are served', async () => {
    const { listener } = start();
    await listener.listen(A);
    await listener.listen(A2);
    await listener.listen(B);
    expect(readers(A)).toBe(1);
    expect(readers(B)).toBe(1);
  });

  it('closes a namespace once its last target is removed, and opens it again when one comes back', async () => {
    const { listener, lines } = start();
    const first = target();
    const second = target();
    await listener.listen(A);
    listener.add(A, first);
    listener.add(A2, second);
    listener.remove(A, first);
    await cancel(A, { [CANCEL_PROPERTY]: 'still' });
    await until(() => second.ids.length === 1, 'the namespace still heard');
    expect(first.ids).toEqual([]);
    listener.remove(A2, second);
    await until(() => readers(A) === 0, 'the subscription closed');
    expect(lines().some((l) => l.includes('no service left in the namespace'))).toBe(true);
    await listener.listen(A);
    listener.add(A, first);
    expect(readers(A)).toBe(1);
    await cancel(A, { [CANCEL_PROPERTY]: 'back' });
    await until(() => first.ids.length === 1, 'the reopened subscription heard');
    expect(first.ids).toEqual(['back']);
  });

  it('closes nothing while held, then what nothing needs once released', async () => {
    const { listener } = start();
    const before = target();
    const after = target();
    await listener.listen(A);
    listener.add(A, before);
    const release = listener.hold();
    // As a reload does: the namespace empties (a retirement ends) and fills again (a new service).
    listener.remove(A, before);
    await listener.listen(B);
    listener.add(A, after);
    release();
    await until(() => readers(B) === 0, 'the unneeded subscription closed');
    await cancel(A, { [CANCEL_PROPERTY]: 'kept' });
    await until(() => after.ids.length === 1, 'the held subscription still heard');
    expect(after.ids).toEqual(['kept']);
  });

  it('serves on when a cancel topic cannot be read, and tries again on the next listen', async () => {
    let refusals = 1;
    class RefusingTransport extends MemoryTransport {
      override subscribe(options: SubscribeOptions): Promise<Subscription> {
        if (options.topic === cancelTopic(A) && refusals-- > 0) return Promise.reject(new TransportError('not authorized', { retriable: false }));
        return super.subscribe(options);
      }
    }
    const { listener, lines } = start(new RefusingTransport());
    await listener.listen(A);
    expect(readers(A)).toBe(0);
    expect(lines().some((l) => l.includes('cannot read cancellations'))).toBe(true);
    await listener.listen(A);
    expect(readers(A)).toBe(1);
  });

  it('closes every subscription on close, and opens none after', async () => {
    const { listener } = start();
    await listener.listen(A);
    await listener.listen(B);
    listener.add(A, target());
    await listener.close();
    expect([readers(A), readers(B)]).toEqual([0, 0]);
    await listener.listen(B);
    expect(readers(B)).toBe(0);
  });
});
