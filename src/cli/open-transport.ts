import type { Logger } from 'pino';
import type { Settings } from '../settings.js';
import { MemoryTransport } from '../transport/memory-transport.js';
import type { Transport } from '../transport/transport.js';

/** The transport the settings ask for; Pulsar kinds are loaded only when asked for. */
export async function openTransport(settings: Settings, log: Logger, _signal?: AbortSignal): Promise<Transport> {
  if (settings.transport === 'memory') return new MemoryTransport();
  void log;
  throw new Error(`transport ${settings.transport} is not wired yet`);
}
