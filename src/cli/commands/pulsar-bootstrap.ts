import { defineCommand, type Command } from '../command.js';
import { commandGroup } from '../command-group.js';
import { UsageError } from '../args.js';
import { bootstrapTrustGraph, type BootstrapReport } from '../../pulsar/trustgraph-bootstrap.js';
import { waitForBroker } from '../../pulsar/wait-for-broker.js';
import { AbortedError, errorMessage } from '../../errors.js';

const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8080';

const HELP = `Usage: toolwire pulsar bootstrap [options]

Create what TrustGraph expects on a Pulsar broker: tenant "tg" (allowed on the
broker's clusters) and namespaces tg/flow, tg/request, tg/response, tg/notify,
with TrustGraph's short retention (3 minutes) on response and notify.
Safe to run again: what exists is left as it is.

Options:
  --admin-url URL   Pulsar admin REST URL (env PULSAR_ADMIN_URL; default ${DEFAULT_ADMIN_URL})
  --token T         Bearer token for the admin API (env PULSAR_ADMIN_TOKEN, then PULSAR_TOKEN)
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
    const token = values.token ?? io.env['PULSAR_ADMIN_TOKEN'] ?? io.env['PULSAR_TOKEN'];
    const common = { token: token === '' ? undefined : token, timeoutMs: timeoutS * 1000, signal: io.signal };
    try {
      if (waitS > 0) await waitForBroker(adminUrl, { ...common, waitMs: waitS * 1000 });
      const report = await bootstrapTrustGraph(adminUrl, {
        ...common,
        tenant: values.tenant,
        ...(values['no-retention'] ? { shortRetention: null } : {}),
      });
      io.stdout.write(values.json ? `${JSON.stringify(report)}\n` : describe(report));
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
