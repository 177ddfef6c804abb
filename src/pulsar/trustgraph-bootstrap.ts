import { PulsarAdminError } from './admin-error.js';
import { PulsarAdminClient, type CreateOutcome, type PulsarAdminOptions, type RetentionPolicy } from './admin-client.js';

/** TrustGraph's namespaces under its tenant. */
export const TRUSTGRAPH_NAMESPACES = ['flow', 'request', 'response', 'notify'] as const;
export type TrustGraphNamespace = (typeof TRUSTGRAPH_NAMESPACES)[number];

/** TrustGraph keeps response and notify messages only briefly. */
export const TRUSTGRAPH_SHORT_RETENTION: RetentionPolicy = { retentionTimeInMinutes: 3, retentionSizeInMB: -1 };
const SHORT_RETENTION_NAMESPACES: readonly TrustGraphNamespace[] = ['response', 'notify'];

export interface BootstrapOptions extends PulsarAdminOptions {
  /** Default `tg`. */
  readonly tenant?: string | undefined;
  /** Retention for `response` and `notify`; `null` leaves retention alone. Default 3 minutes. */
  readonly shortRetention?: RetentionPolicy | null | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface NamespaceReport {
  readonly namespace: string;
  readonly outcome: CreateOutcome;
  /**
   * `set`: the short retention was applied; `kept`: the namespace already had a retention
   * policy of its own (left as it is); `skipped`: not asked for.
   */
  readonly retention: 'set' | 'kept' | 'skipped';
}

export interface BootstrapReport {
  readonly adminUrl: string;
  readonly clusters: readonly string[];
  readonly tenant: string;
  readonly tenantOutcome: CreateOutcome;
  readonly namespaces: readonly NamespaceReport[];
}

/**
 * Create TrustGraph's tenant (allowed on every cluster the broker reports) and namespaces
 * `flow`, `request`, `response`, `notify`. Idempotent: what exists is left as it is; a
 * namespace with no retention policy of its own gets TrustGraph's short one on response/notify.
 */
export async function bootstrapTrustGraph(adminUrl: string, opts: BootstrapOptions = {}): Promise<BootstrapReport> {
  const client = new PulsarAdminClient(adminUrl, opts);
  const signal = opts.signal;
  const tenant = opts.tenant ?? 'tg';
  const retention = opts.shortRetention === undefined ? TRUSTGRAPH_SHORT_RETENTION : opts.shortRetention;

  const clusters = await client.listClusters(signal);
  if (clusters.length === 0) {
    throw new PulsarAdminError(`the broker at ${client.adminUrl} reports no cluster; cannot create tenant ${tenant}`, {
      call: 'GET /admin/v2/clusters',
    });
  }
  const tenantOutcome = await client.createTenant(tenant, { adminRoles: [], allowedClusters: clusters }, signal);

  const namespaces: NamespaceReport[] = [];
  for (const name of TRUSTGRAPH_NAMESPACES) {
    const namespace = `${tenant}/${name}`;
    const outcome = await client.createNamespace(namespace, signal);
    let applied: NamespaceReport['retention'] = 'skipped';
    if (retention && SHORT_RETENTION_NAMESPACES.includes(name)) {
      const current = outcome === 'created' ? undefined : await client.getRetention(namespace, signal);
      const unset = current === undefined || (current.retentionTimeInMinutes === 0 && current.retentionSizeInMB === 0);
      if (unset) {
        await client.setRetention(namespace, retention, signal);
        applied = 'set';
      } else {
        applied = 'kept';
      }
    }
    namespaces.push({ namespace, outcome, retention: applied });
  }
  return { adminUrl: client.adminUrl, clusters, tenant, tenantOutcome, namespaces };
}
