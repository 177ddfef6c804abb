import { join } from 'node:path';
import { ManagedChild, REPO_ROOT } from '../child-process.js';
import { ensurePython } from '../environment-setup.js';
import type { BrokerEndpoints } from '../transport-for.js';

const CONFIG_SERVICE = join(REPO_ROOT, 'test', 'interop', 'py', 'config_service.py');

/** TrustGraph's three config queues for one drill: short names for its processors, full ones for ours. */
export interface ConfigQueueNames {
  readonly short: { readonly request: string; readonly response: string; readonly push: string };
  readonly full: { readonly request: string; readonly response: string; readonly push: string };
}

export function configQueues(id: string): ConfigQueueNames {
  return {
    short: { request: `request:tg:${id}-config`, response: `response:tg:${id}-config`, push: `notify:tg:${id}-config` },
    full: {
      request: `non-persistent://tg/request/${id}-config`,
      response: `non-persistent://tg/response/${id}-config`,
      push: `non-persistent://tg/notify/${id}-config`,
    },
  };
}

/** TrustGraph's own config service (its Python code, an in-memory table), as the interop tests run it. */
export async function startConfigService(broker: BrokerEndpoints, queues: ConfigQueueNames, id: string, signal: AbortSignal): Promise<ManagedChild> {
  const python = await ensurePython(process.env, signal, () => undefined);
  const child = new ManagedChild({
    command: python,
    args: [
      CONFIG_SERVICE,
      '--pulsar-host',
      broker.pulsarUrl,
      '--config-request-queue',
      queues.short.request,
      '--config-response-queue',
      queues.short.response,
      '--config-push-queue',
      queues.short.push,
      '--id',
      `${id}-svc`,
    ],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    ipc: false,
    label: 'TrustGraph config service',
  });
  await child.waitForLine(/"ready": true/, 120_000, signal);
  return child;
}

/** The environment that puts a toolwire process on the TrustGraph config source of these queues. */
export function trustGraphSourceEnv(queues: ConfigQueueNames): Record<string, string> {
  // Pokes only, no polling: a change after an outage is served only if the pokes came back too.
  return {
    TOOLWIRE_CONFIG_SOURCE: 'trustgraph',
    TOOLWIRE_CONFIG_REQUEST_QUEUE: queues.full.request,
    TOOLWIRE_CONFIG_RESPONSE_QUEUE: queues.full.response,
    TOOLWIRE_CONFIG_PUSH_QUEUE: queues.full.push,
    TOOLWIRE_CONFIG_POLL_MS: '0',
  };
}
