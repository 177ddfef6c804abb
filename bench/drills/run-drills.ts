import type { DrillContext } from './drill-context.js';
import type { DrillResult } from './drill-result.js';
import { OUTAGE_DRILL, brokerOutageDrill } from './broker-outage-drill.js';
import { RESTART_DRILL, brokerRestartDrill } from './broker-restart-drill.js';
import { UNLOAD_DRILL, unloadDrill } from './unload-drill.js';
import { CLUSTER_DRILL, clusterDrill } from './cluster-drill.js';
import { RELOAD_DRILL, configReloadDrill } from './config-reload-drill.js';
import { CHURN_DRILL, CHURN_FLEET_SERVICES, configChurnDrill } from './config-churn-drill.js';
import { HOSTILE_DRILL, hostileEnvelopesDrill } from './hostile-envelopes-drill.js';
import { KILL_DRILL, killWorkerDrill } from './kill-worker-drill.js';
import { FAULTS_DRILL, pluginFaultsDrill } from './plugin-faults-drill.js';

export const DRILL_NAMES = [
  'kill-worker',
  'broker-restart',
  'hostile-envelopes',
  'hostile-envelopes-np',
  'plugin-faults',
  'config-reload',
  'config-reload-dir',
  'broker-outage',
  'unload',
  'config-churn',
  'config-churn-dir',
  'config-churn-dir-fleet',
] as const;
/** Drills run only when named (`--only`): they need more than a broker (cluster: Docker). */
export const NAMED_ONLY_DRILLS = ['cluster'] as const;
export type NamedOnlyDrill = (typeof NAMED_ONLY_DRILLS)[number];
export type DrillName = (typeof DRILL_NAMES)[number];

/** Run one drill in the context's form (short for CI, long for the full sizes). */
export async function runDrill(name: DrillName | NamedOnlyDrill, ctx: DrillContext): Promise<DrillResult> {
  switch (name) {
    case 'kill-worker':
      return killWorkerDrill(ctx, KILL_DRILL[ctx.form]);
    case 'broker-restart':
      return brokerRestartDrill(ctx, RESTART_DRILL[ctx.form]);
    case 'hostile-envelopes':
      return hostileEnvelopesDrill(ctx, HOSTILE_DRILL[ctx.form]);
    case 'hostile-envelopes-np':
      return hostileEnvelopesDrill(ctx, { ...HOSTILE_DRILL[ctx.form], nonPersistentRequests: true });
    case 'plugin-faults':
      return pluginFaultsDrill(ctx, FAULTS_DRILL[ctx.form]);
    case 'config-reload':
      return configReloadDrill(ctx, { ...RELOAD_DRILL[ctx.form], source: 'trustgraph' });
    case 'config-reload-dir':
      return configReloadDrill(ctx, { ...RELOAD_DRILL[ctx.form], source: 'directory' });
    case 'broker-outage':
      return brokerOutageDrill(ctx, OUTAGE_DRILL[ctx.form]);
    case 'unload':
      return unloadDrill(ctx, UNLOAD_DRILL[ctx.form]);
    case 'cluster':
      return clusterDrill(ctx, CLUSTER_DRILL[ctx.form]);
    case 'config-churn':
      return configChurnDrill(ctx, { ...CHURN_DRILL[ctx.form], source: 'trustgraph' });
    case 'config-churn-dir':
      return configChurnDrill(ctx, { ...CHURN_DRILL[ctx.form], source: 'directory' });
    case 'config-churn-dir-fleet':
      return configChurnDrill(ctx, { ...CHURN_DRILL[ctx.form], source: 'directory', fleet: CHURN_FLEET_SERVICES });
  }
}
