import type { ToolService } from '../catalog/descriptors.js';
import type { Plugin } from '../plugins/plugin.js';
import type { Subscription } from '../transport/transport.js';
import type { Backlog } from './backlog.js';
import type { RequestHandler } from './request-handler.js';

/**
 * What serves one service's requests: its descriptor, plugin and handler. A reload that
 * changes the service but not where it is consumed swaps in a new instance on the same
 * subscription; the old one finishes what it started.
 */
export interface Instance {
  readonly service: ToolService;
  readonly plugin: Plugin;
  readonly handler: RequestHandler;
  /** Where agents cancel calls of its request topic's namespace (undefined for a malformed topic). */
  readonly cancelTopic: string | undefined;
  readonly concurrency: number;
  /** Its requests not yet settled (a count: the hot path pays one increment, not a set entry). */
  active: number;
  /** Called when `active` drops to zero, while a retire waits for it. */
  idle: (() => void) | undefined;
}

/** One subscription being consumed, and the instance that answers what it takes. */
export interface Binding {
  current: Instance;
  readonly subscription: Subscription;
  /** What it was opened with: a change of these needs a new subscription. */
  readonly topic: string;
  readonly name: string;
  readonly prefetch: number;
  loop: Promise<void>;
  /** Intake is over for this binding: a reload retired it, or the worker is stopping. */
  stopped: boolean;
  /** Wakes its intake loop when it waits for a free slot (or its bound grew). */
  wake: () => void;
  /** A non-persistent topic's requests waiting for a slot, while its intake runs. */
  backlog?: Backlog | undefined;
}
