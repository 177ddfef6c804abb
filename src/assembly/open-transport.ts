import type { Logger } from 'pino';
import { bootstrapTrustGraph } from '../pulsar/trustgraph-bootstrap.js';
import type { Settings } from '../settings.js';
import { adminUrlOf } from '../transport/broker-urls.js';
import { openBrokerAccess } from './broker-access.js';
import { createTransport } from './create-transport.js';
import type { Transport } from '../transport/transport.js';

/**
 * The transport the settings ask for (Pulsar kinds load only when asked for), after creating
 * TrustGraph's tenant and namespaces when `bootstrap` is set.
 */
export async function openTransport(settings: Settings, log: Logger, signal?: AbortSignal): Promise<Transport> {
  if (settings.transport === 'memory') return createTransport({ kind: 'memory' });
  const access = await openBrokerAccess(settings.pulsarAuth, log);
  if (settings.bootstrap) {
    const adminUrl = adminUrlOf(settings.pulsarUrl, settings.pulsarAdminUrl);
    const report = await bootstrapTrustGraph(adminUrl, { ...(await access.admin()), ...(signal ? { signal } : {}) });
    log.info({ tenant: report.tenant, namespaces: report.namespaces.map((ns) => `${ns.namespace}:${ns.outcome}`) }, 'pulsar bootstrapped');
  }
  return createTransport({
    kind: settings.transport,
    ...(settings.pulsarUrl ? { serviceUrl: settings.pulsarUrl } : {}),
    ...(settings.pulsarAdminUrl ? { adminUrl: settings.pulsarAdminUrl } : {}),
    access,
    native: { nonPersistentInFlight: settings.nonPersistentInFlight, nonPersistentConnections: settings.nonPersistentConnections },
    ws: { nonPersistentInFlight: settings.nonPersistentInFlight },
    // Each transport names itself (component, transport) on its own child logger.
    log,
  });
}
