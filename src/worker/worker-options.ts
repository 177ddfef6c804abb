import type { Logger } from 'pino';
import type { Catalog } from '../catalog/catalog.js';
import type { ToolService } from '../catalog/descriptors.js';
import type { Plugin } from '../plugins/plugin.js';
import type { Transport } from '../transport/transport.js';
import type { Interceptor } from './interceptor.js';
import type { WorkerLimits } from './limits.js';

export interface WorkerOptions {
  readonly transport: Transport;
  /** The first catalog served. */
  readonly catalog: Catalog;
  /**
   * Makes the plugin that serves a service here: for the first catalog, and for each service a
   * reload adds or changes. Undefined leaves the service to other workers. The worker owns
   * what it makes, and closes it once the service is retired or the worker stops.
   */
  readonly createPlugin: (service: ToolService) => Promise<Plugin | undefined>;
  readonly log: Logger;
  readonly limits?: Partial<WorkerLimits>;
  /**
   * The concerns around each service's requests, outermost first (tracing, metrics...): the
   * composition root's choice, as Temporal's WorkerOptions.interceptors. An undefined entry is
   * a concern that is off. The worker adds its own debug line innermost.
   */
  readonly interceptors?: (service: ToolService) => readonly (Interceptor | undefined)[];
  /** What the worker tells its host as it happens (the metrics count it). */
  readonly events?: WorkerEvents;
}

/** Events of the worker for its host; every listener optional, none may throw. */
export interface WorkerEvents {
  /** A request of a service still served was answered `unavailable` without running (a full backlog, a blocked service). */
  shed?(serviceId: string): void;
  /** A reload committed: `catalog` is served from now on. */
  applied?(catalog: Catalog): void;
}
