import type { ToolService } from '../catalog/descriptors.js';
import type { Plugin } from '../plugins/plugin.js';
import type { RequestHandler } from './request-handler.js';

/**
 * What serves one service's requests: its descriptor, plugin and handler, and how many of its
 * requests are in flight. A reload that changes the service but not where it is consumed
 * swaps in a new instance on the same subscription; the old one finishes what it started.
 */
export class ServiceInstance {
  /** Its requests not yet settled (a count: the hot path pays one increment, not a set entry). */
  private active = 0;
  private idled: (() => void) | undefined;
  private idling: Promise<void> | undefined;

  constructor(
    readonly service: ToolService,
    readonly plugin: Plugin,
    readonly handler: RequestHandler,
    /** How many of its requests may run at once. */
    readonly concurrency: number,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  /** One more of its requests is in flight. */
  enter(): void {
    this.active++;
  }

  /** One of its requests settled. */
  leave(): void {
    if (--this.active === 0 && this.idled) {
      this.idled();
      this.idled = this.idling = undefined;
    }
  }

  /** Settles once none of its requests is in flight (a retirement waits for it). */
  idle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return (this.idling ??= new Promise<void>((resolve) => (this.idled = resolve)));
  }
}
