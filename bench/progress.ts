import type { Writable } from 'node:stream';
import type { LoadProgress } from './load-generator.js';

/**
 * Progress on stderr: a bar redrawn in place on a terminal, a plain line every few seconds
 * otherwise (CI logs, files), so the output stays readable either way.
 */
export class ProgressReporter {
  private lastLineAt = 0;
  private drawn = false;

  constructor(
    private readonly out: Writable,
    private readonly tty: boolean,
    private readonly plainEveryMs = 5_000,
  ) {}

  /** A line of its own (a scenario starting, a note). */
  note(text: string): void {
    this.clear();
    this.out.write(`${text}\n`);
  }

  update(label: string, p: LoadProgress): void {
    const fraction = p.total !== undefined ? p.done / Math.max(1, p.total) : p.durationMs !== undefined ? p.elapsedMs / p.durationMs : 0;
    const pct = Math.min(100, Math.floor(fraction * 100));
    const counts = p.total !== undefined ? `${fmt(p.done)}/${fmt(p.total)}` : `${fmt(p.done)} in ${(p.elapsedMs / 1000).toFixed(0)}s`;
    const stats = `${fmt(Math.round(p.ratePerSec))} req/s${p.p99Ms > 0 ? `  p99 ${p.p99Ms.toFixed(2)} ms` : ''}`;
    if (this.tty) {
      const width = 24;
      const filled = Math.round((pct / 100) * width);
      const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
      this.out.write(`\r\x1b[2K${label} ${p.phase.padEnd(7)} [${bar}] ${String(pct).padStart(3)}% ${counts}  ${stats}`);
      this.drawn = true;
      return;
    }
    const now = Date.now();
    if (now - this.lastLineAt < this.plainEveryMs) return;
    this.lastLineAt = now;
    this.out.write(`${label} ${p.phase} ${pct}% ${counts} ${stats}\n`);
  }

  clear(): void {
    if (this.tty && this.drawn) this.out.write('\r\x1b[2K');
    this.drawn = false;
  }
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
