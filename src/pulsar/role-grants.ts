import type { PermissionAction, PulsarAdminClient } from './admin-client.js';

/**
 * What each role of TrustGraph's topology needs, and no more (docs/pulsar.md, "Roles and
 * permissions"). Pulsar grants by namespace here: a grant on one topic needs the topic to
 * exist, and a non-persistent one exists only while in use. So a worker reads all of
 * tg/response, where its gateway's calls and the config service answer it.
 */
export interface RoleGrant {
  readonly role: string;
  /** `tenant/namespace`. */
  readonly on: string;
  readonly actions: readonly PermissionAction[];
  /** Why, for the report and the docs. */
  readonly why: string;
}

export interface RoleGrantOptions {
  readonly tenant: string;
  readonly workerRole?: string | undefined;
  readonly agentRole?: string | undefined;
  /** The worker reads TrustGraph's config service (TOOLWIRE_CONFIG_SOURCE=trustgraph). */
  readonly trustGraphConfig?: boolean | undefined;
}

export function roleGrants(o: RoleGrantOptions): RoleGrant[] {
  const grants: RoleGrant[] = [];
  const ns = (name: string): string => `${o.tenant}/${name}`;
  if (o.workerRole) {
    const role = o.workerRole;
    grants.push(
      { role, on: ns('request'), actions: ['consume', 'produce'], why: 'consume requests and cancels; produce dead letters and config requests' },
      { role, on: ns('flow'), actions: ['consume'], why: "consume requests on TrustGraph's flow topics" },
      { role, on: ns('response'), actions: ['produce', 'consume'], why: "produce answers; consume its gateway's answers and the config service's" },
    );
    if (o.trustGraphConfig) grants.push({ role, on: ns('notify'), actions: ['consume'], why: "consume the config service's pushes" });
  }
  if (o.agentRole) {
    const role = o.agentRole;
    grants.push(
      { role, on: ns('request'), actions: ['produce'], why: 'produce tool requests and cancels' },
      { role, on: ns('response'), actions: ['consume'], why: 'consume answers' },
    );
  }
  return grants;
}

/** Apply the grants, one admin call each; each replaces what the role had on that namespace. */
export async function applyRoleGrants(client: PulsarAdminClient, grants: readonly RoleGrant[], signal?: AbortSignal): Promise<void> {
  for (const g of grants) await client.grantNamespacePermission(g.on, g.role, g.actions, signal);
}
