import type { Logger } from 'pino';

/**
 * One outage, one pair of lines: a transport's links (one socket per subscription and
 * producer) report losing and regaining the broker here, and the process logs the first loss
 * and the moment the last lost link is back, not a line per socket or per retry.
 */
export class OutageLog {
  private readonly down = new Set<object>();
  private since = 0;
  private lost = 0;
  private back = 0;

  constructor(private readonly log: Logger) {}

  /** `link` lost its connection and is reconnecting. */
  linkLost(link: object): void {
    if (this.down.has(link)) return;
    if (this.down.size === 0) {
      this.since = Date.now();
      this.lost = 0;
      this.back = 0;
      this.log.warn('broker connection lost; reconnecting');
    }
    this.lost++;
    this.down.add(link);
  }

  /** `link` is connected again. */
  linkBack(link: object): void {
    if (!this.down.delete(link)) return;
    this.back++;
    this.settle();
  }

  /** `link` was closed: it will not come back, and no longer counts. */
  linkGone(link: object): void {
    if (this.down.delete(link)) this.settle();
  }

  private settle(): void {
    if (this.down.size > 0 || this.back === 0) return;
    this.log.info({ downMs: Date.now() - this.since, links: this.lost, reconnected: this.back }, 'broker connection recovered');
  }
}
