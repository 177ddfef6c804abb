import { randomUUID } from 'node:crypto';
import { MemoryTransport } from '../../src/transport/memory-transport.js';
import { transportContract } from './transport-contract.js';

transportContract('memory', async () => new MemoryTransport(), {
  topic: (persistent) => `${persistent ? 'persistent' : 'non-persistent'}://public/default/contract-${randomUUID()}`,
  nackDelayMs: 50,
  receiveTimeoutMs: 1000,
});
