import type { CommandIo } from '../src/cli/command.js';
import { createLogger } from '../src/logging.js';
import { startFloorResponder } from './floor-responder.js';
import { transportFor, type BenchTransportKind, type BrokerEndpoints } from './transport-for.js';

export interface ServeFloorOptions {
  readonly transport: BenchTransportKind;
  /** Required for the Pulsar kinds. */
  readonly broker: BrokerEndpoints | undefined;
  readonly requestTopic: string;
  readonly responseTopic: string;
  readonly subscription: string;
  readonly concurrency: number;
}

/** `npm run bench -- serve-floor`: the floor responder as a process of its own, like the worker. */
export async function serveFloor(io: CommandIo, o: ServeFloorOptions): Promise<number> {
  const log = createLogger({ level: io.env['LOG_LEVEL'] ?? 'info' });
  const transport = await transportFor(o.transport, o.broker, log);
  try {
    const floor = await startFloorResponder({ ...o, transport, log, signal: io.signal });
    log.info({ topic: o.requestTopic, concurrency: o.concurrency }, 'floor is serving');
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await floor.stop();
    log.info({ answered: floor.answered() }, 'floor stopped');
  } finally {
    await transport.close();
  }
  log.flush?.();
  return 0;
}
