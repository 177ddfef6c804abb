import { defineCommand, type Command } from '../command.js';
import { commandGroup } from '../command-group.js';
import { UsageError } from '../args.js';
import { bootstrapTrustGraph, type BootstrapReport } from '../../pulsar/trustgraph-bootstrap.js';
import { waitForBroker } from '../../pulsar/wait-for-broker.js';
import { AbortedError, errorMessage } from '../../errors.js';
import pino from 'pino';
import { readSettings } from '../../settings.js';
import { openBrokerAccess } from '../../assembly/broker-access.js';
import { PulsarAdminClient } from '../../pulsar/admin-client.js';
import { applyRoleGrants, roleGrants } from '../../pulsar/role-grants.js';

const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8080';

const HELP = `Usage: toolwire pulsar bootstrap [options]

Create what TrustGraph expects on a Pulsar broker: tenant "tg" (allowed on the
broker's clusters) and namespaces tg/flow, tg/request, tg/response, tg/notify,
with TrustGraph's short retention (3 minutes) on response and notify.
Safe to run again: what exists is left as it is. With --worker-role and
--agent-role it also grants those roles what TrustGraph's topology needs of
them, and nothing more (docs/pulsar.md, "Roles and permissions").

Options:
  --admin-url URL   Pulsar admin REST URL (env PULSAR_ADMIN_URL; default ${DEFAULT_ADMIN_URL})
  --token T         Bearer token for the admin API (env PULSAR_ADMIN_TOKEN; else the
                    worker's own: PULSAR_TOKEN, PULSAR_TOKEN_FILE or PULSAR_OAUTH2_*)
  --worker-role R   Grant role R a worker's permissions
  --agent-role R    Grant role R an agent's permissions
  --trustgraph-config  The worker role also reads the config service's pushes
                    (tg/notify): for TOOLWIRE_CONFIG_SOURCE=trustgraph
  --tenant NAME     Tenant to create (default tg)
  --wait SECONDS    Wait up to this long for the broker to answer first (default 0)
  --timeout SECONDS Limit for each admin call (default 10)
  --no-retention    Do not touch retention policies
  --json            Print the report as one JSON object
  -h, --help        Show this help

Exit status: 0 done, 1 the broker refused or could not be reached, 2 bad usage.
`;

const bootstrap: Command = defineCommand({
  name: 'bootstrap',
  summary: "Create TrustGraph's tenant and namespaces on a Pulsar broker",
  help: HELP,
  flags: {
    'admin-url': { type: 'string' },
    token: { type: 'string' },
    tenant: { type: 'string' },
    'worker-role': { type: 'string' },
    'agent-role': { type: 'string' },
    'trustgraph-config': { type: 'boolean' },
    wait: { type: 'string' },
    timeout: { type: 'string' },
    'no-retention': { type: 'boolean' },
    json: { type: 'boolean' },
  },
  positionals: false,
  async run(io, { values }) {
    const waitS = seconds(values.wait, 0);
    const timeoutS = seconds(values.timeout, 10);
    if (waitS === undefined || timeoutS === undefined || timeoutS === 0) {
      io.stderr.write('toolwire pulsar bootstrap: --wait and --timeout take a number of seconds (--timeout > 0)\n');
      return 2;
    }
    const adminUrl = values['admin-url'] ?? io.env['PULSAR_ADMIN_URL'] ?? DEFAULT_ADMIN_URL;
    const token = values.token ?? io.env['PULSAR_ADMIN_TOKEN'];
    try {
      const settings = readSettings(io.env);
      // An admin token given here stands in for the worker's own credentials; TLS stays as set.
      const auth = token ? { ...settings.pulsarAuth, token, tokenFile: undefined, oauth2: undefined } : settings.pulsarAuth;
      const access = await openBrokerAccess(auth, pino({ level: 'silent' }));
      const common = { ...(await access.admin()), timeoutMs: timeoutS * 1000, signal: io.signal };
      if (waitS > 0) await waitForBroker(adminUrl, { ...common, waitMs: waitS * 1000 });
      const tenant = values.tenant ?? 'tg';
      const report = await bootstrapTrustGraph(adminUrl, {
        ...common,
        tenant,
        ...(values['no-retention'] ? { shortRetention: null } : {}),
      });
      const grants = roleGrants({ tenant, workerRole: values['worker-role'], agentRole: values['agent-role'], trustGraphConfig: values['trustgraph-config'] });
      await applyRoleGrants(new PulsarAdminClient(adminUrl, common), grants, io.signal);
      access.close();
      io.stdout.write(
        values.json
          ? `${JSON.stringify({ ...report, grants })}\n`
          : describe(report) + grants.map((g) => `granted ${g.role} ${g.actions.join('+')} on ${g.on}: ${g.why}\n`).join(''),
      );
      return 0;
    } catch (err) {
      if (err instanceof AbortedError) {
        io.stderr.write('toolwire pulsar bootstrap: cancelled\n');
        return 130;
      }
      io.stderr.write(`toolwire pulsar bootstrap: ${errorMessage(err)}\n`);
      return 1;
    }
  },
});

/** `toolwire pulsar bootstrap`, which names itself in every message, a bad command line's too. */
export const pulsarBootstrapCommand: Command = {
  ...bootstrap,
  async run(io) {
    try {
      return await bootstrap.run(io);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      io.stderr.write(`toolwire pulsar bootstrap: ${err.message}\n`);
      return 2;
    }
  },
};

function seconds(raw: string | undefined, fallback: number): number | undefined {
  if (raw === undefined) return fallback;
  const parsed = Number(raw);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : undefined;
}

function describe(report: BootstrapReport): string {
  const lines = [`broker ${report.adminUrl} (clusters: ${report.clusters.join(', ')})`, `tenant ${report.tenant}: ${report.tenantOutcome}`];
  for (const ns of report.namespaces) {
    const retention = ns.retention === 'set' ? ', short retention set' : ns.retention === 'kept' ? ', retention kept as found' : '';
    lines.push(`namespace ${ns.namespace}: ${ns.outcome}${retention}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `toolwire pulsar ...`: broker chores. */
export const pulsarCommand: Command = commandGroup('pulsar', "broker chores: create TrustGraph's tenant and namespaces (bootstrap)", [pulsarBootstrapCommand]);
