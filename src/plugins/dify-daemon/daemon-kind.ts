import { difyOptionsSchema } from '../dify-common/dify-tool-options.js';

export const DIFY_DAEMON_KIND = 'dify-daemon';

/** Dify tools through the plugin daemon: the same options on a service and on each tool (which win). */
export const difyDaemonSchemas = { kind: DIFY_DAEMON_KIND, serviceOptions: difyOptionsSchema, toolOptions: difyOptionsSchema } as const;
