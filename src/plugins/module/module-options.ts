import { z } from 'zod';
import { isWatchRevision } from './module-revision.js';

export const MODULE_KIND = 'module';

/** A module service's `plugin` object. */
export const moduleServiceOptions = z.strictObject({
  /** `builtin:<name>`, a path relative to the config directory (.js, .mjs, .ts, .mts), or a package installed where the config directory can import it. */
  module: z.string().min(1),
  /** The export to call (a function, or one typed tool); default: the module's typed tools, else `default`. */
  export: z.string().min(1).optional(),
  /** Stamped by `toolwire run --watch` when the module's files change (a new value imports them afresh); never accepted from config. */
  revision: z.string().refine(isWatchRevision, 'is set by toolwire run --watch only, never by config').optional(),
});
export type ModuleOptions = z.output<typeof moduleServiceOptions>;

/** Which of a module's typed tools a tool descriptor calls; default: the one of the descriptor's name. */
export const moduleToolOptions = z.strictObject({ tool: z.string().min(1).optional() });
export type ModuleToolOptions = z.output<typeof moduleToolOptions>;

/** What a module descriptor is parsed with. */
export const moduleSchemas = { kind: MODULE_KIND, serviceOptions: moduleServiceOptions, toolOptions: moduleToolOptions } as const;
