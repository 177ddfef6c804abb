import type { DrillContext } from './drill-context.js';
import type { DrillResult } from './drill-result.js';
import { RESTART_DRILL, brokerRestartDrill } from './broker-restart-drill.js';
import { RELOAD_DRILL, configReloadDrill } from './config-reload-drill.js';
import { HOSTILE_DRILL, hostileEnvelopesDrill } from './hostile-envelopes-drill.js';
import { KILL_DRILL, killWorkerDrill } from './kill-worker-drill.js';
import { FAULTS_DRILL, pluginFaultsDrill } from './plugin-faults-drill.js';

export const DRILL_NAMES = ['kill-worker', 'broker-restart', 'hostile-envelopes', 'hostile-envelopes-np', 'plugin-faults', 'config-reload', 'config-reload-dir'] as const;
export type DrillName = (typeof DRILL_NAMES)[number];

/** Run one drill in the context's form (short for CI, long for the full sizes). */
export async function runDrill(name: DrillName, ctx: DrillContext): Promise<DrillResult> {
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
  }
}
