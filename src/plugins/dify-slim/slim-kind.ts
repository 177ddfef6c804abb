import { difyOptionsSchema } from '../dify-common/dify-tool-options.js';

export const DIFY_SLIM_KIND = 'dify-slim';

/** Dify tools through the slim binary: the same options on a service and on each tool (which win). */
export const difySlimSchemas = { kind: DIFY_SLIM_KIND, serviceOptions: difyOptionsSchema, toolOptions: difyOptionsSchema } as const;
