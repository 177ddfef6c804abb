import { afterAll, beforeAll } from 'vitest';
import { OwnBroker } from '../../bench/own-broker.js';

/** The limit the suite's own broker keeps, against 1,000 by default. */
export const DROPPING_BROKER_LIMIT = 50;

/**
 * A broker of the calling suite's own, started before its tests and destroyed after, that drops
 * a non-persistent publish beyond DROPPING_BROKER_LIMIT in flight on its connection and confirms
 * it all the same, with ledger and entry -1 (`maxConcurrentNonPersistentMessagePerConnection`,
 * ServerCnx). Returns a getter: the broker exists once the suite's hooks have run.
 */
export function brokerDroppingPublishes(): () => OwnBroker {
  let broker: OwnBroker | undefined;
  beforeAll(async () => {
    broker = await OwnBroker.start(AbortSignal.timeout(240_000), undefined, `maxConcurrentNonPersistentMessagePerConnection=${DROPPING_BROKER_LIMIT}`);
  }, 300_000);
  afterAll(async () => {
    await broker?.destroy();
  }, 120_000);
  return () => {
    if (broker === undefined) throw new Error('the dropping broker is not up: call this inside a test');
    return broker;
  };
}
