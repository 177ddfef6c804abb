import type { ScenarioResult } from '../bench-runner.js';
import { withoutRound } from '../scenario-id.js';

/**
 * The report's chart as a self-contained SVG (no dependency): throughput per scenario,
 * the latency percentile curve on a log scale, and RSS over time.
 */
const COLORS: Readonly<Record<string, string>> = {
  'floor-single': '#6b6b6b',
  'toolwire-single': '#1f77b4',
  'python-single': '#ff7f0e',
  'floor-stream': '#b0b0b0',
  'toolwire-stream': '#6baed6',
  'toolwire-long': '#08306b',
};
/** Later rounds (`-r2`...) share their scenario's colour. */
const color = (id: string) => COLORS[withoutRound(id)] ?? '#2ca02c';
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Panel {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

const PERCENTILES = [50, 90, 99, 99.9] as const;

export function svgChart(results: readonly ScenarioResult[], title: string): string {
  const ok = results.filter((r) => r.load && r.load.answered > 0);
  const width = 1260;
  const height = 460;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="100%" height="100%" fill="white"/>`);
  out.push(`<text x="${width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`);
  out.push(...throughputPanel(ok, { x: 150, y: 50, w: 230, h: 330 }));
  out.push(...latencyPanel(ok, { x: 470, y: 50, w: 320, h: 330 }));
  out.push(...rssPanel(ok, { x: 880, y: 50, w: 340, h: 330 }));
  // Legend
  const step = Math.min(200, (width - 80) / Math.max(1, ok.length));
  ok.forEach((r, i) => {
    const lx = 40 + i * step;
    out.push(`<rect x="${lx}" y="${height - 28}" width="12" height="12" fill="${color(r.scenario.id)}"/>`);
    out.push(`<text x="${lx + 16}" y="${height - 18}">${esc(r.scenario.id)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function frame(p: Panel, title: string, xLabel: string, yLabel: string): string[] {
  return [
    `<text x="${p.x + p.w / 2}" y="${p.y - 12}" text-anchor="middle" font-weight="bold">${esc(title)}</text>`,
    `<line x1="${p.x}" y1="${p.y + p.h}" x2="${p.x + p.w}" y2="${p.y + p.h}" stroke="#333"/>`,
    `<line x1="${p.x}" y1="${p.y}" x2="${p.x}" y2="${p.y + p.h}" stroke="#333"/>`,
    `<text x="${p.x + p.w / 2}" y="${p.y + p.h + 32}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(${p.x - 44},${p.y + p.h / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  ];
}

function throughputPanel(rs: readonly ScenarioResult[], p: Panel): string[] {
  const out = [
    `<text x="${p.x + p.w / 2}" y="${p.y - 12}" text-anchor="middle" font-weight="bold">Throughput (answers/s)</text>`,
    `<line x1="${p.x}" y1="${p.y}" x2="${p.x}" y2="${p.y + p.h}" stroke="#333"/>`,
  ];
  const max = niceMax(Math.max(...rs.map((r) => r.load!.throughputPerSec), 1));
  const band = p.h / Math.max(1, rs.length);
  rs.forEach((r, i) => {
    const v = r.load!.throughputPerSec;
    const w = (v / max) * p.w;
    const y = p.y + i * band + band * 0.15;
    out.push(`<rect x="${p.x}" y="${y}" width="${w.toFixed(1)}" height="${(band * 0.7).toFixed(1)}" fill="${color(r.scenario.id)}"/>`);
    out.push(`<text x="${p.x - 6}" y="${y + band * 0.4}" text-anchor="end">${esc(r.scenario.id)}</text>`);
    out.push(`<text x="${p.x + w + 4}" y="${y + band * 0.4}">${Math.round(v).toLocaleString('en-US')}</text>`);
  });
  return out;
}

function latencyPanel(rs: readonly ScenarioResult[], p: Panel): string[] {
  const out = frame(p, 'Latency by percentile (ms, log scale)', 'percentile', 'ms');
  const values = rs.flatMap((r) => [r.load!.latency.p50Ms, r.load!.latency.p999Ms]).filter((v) => v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.max(0.01, Math.min(...values))));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values, lo * 10)));
  const yOf = (v: number) => p.y + p.h - ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * p.h;
  const xOf = (i: number) => p.x + 20 + (i / (PERCENTILES.length - 1)) * (p.w - 40);
  for (let d = lo; d <= hi; d *= 10) {
    out.push(`<line x1="${p.x}" y1="${yOf(d)}" x2="${p.x + p.w}" y2="${yOf(d)}" stroke="#ddd"/>`);
    out.push(`<text x="${p.x - 4}" y="${yOf(d) + 4}" text-anchor="end">${d >= 1 ? d : d.toFixed(2)}</text>`);
  }
  PERCENTILES.forEach((pc, i) => out.push(`<text x="${xOf(i)}" y="${p.y + p.h + 14}" text-anchor="middle">p${pc}</text>`));
  for (const r of rs) {
    const l = r.load!.latency;
    const pts = [l.p50Ms, l.p90Ms, l.p99Ms, l.p999Ms].map((v, i) => `${xOf(i).toFixed(1)},${yOf(v).toFixed(1)}`);
    out.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${color(r.scenario.id)}" stroke-width="2"/>`);
    for (const pt of pts) {
      const [cx, cy] = pt.split(',');
      out.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${color(r.scenario.id)}"/>`);
    }
  }
  return out;
}

function rssPanel(rs: readonly ScenarioResult[], p: Panel): string[] {
  const out = frame(p, 'Target RSS (MB); warm-up left of 0', 'seconds from the measured phase', 'MB');
  const series = rs.map((r) => ({ id: r.scenario.id, pts: r.series })).filter((s) => s.pts.length > 0);
  if (series.length === 0) return out;
  const minT = Math.min(0, ...series.flatMap((s) => s.pts.map((x) => x.tMs))) / 1000;
  const maxT = Math.max(...series.flatMap((s) => s.pts.map((x) => x.tMs)), 1000) / 1000;
  const maxMb = niceMax(Math.max(...series.flatMap((s) => s.pts.map((x) => x.rssBytes / 2 ** 20))));
  const xOf = (t: number) => p.x + ((t - minT) / (maxT - minT)) * p.w;
  out.push(`<line x1="${xOf(0)}" y1="${p.y}" x2="${xOf(0)}" y2="${p.y + p.h}" stroke="#999" stroke-dasharray="4 3"/>`);
  const yOf = (mb: number) => p.y + p.h - (mb / maxMb) * p.h;
  for (let i = 0; i <= 4; i++) {
    const v = (maxMb / 4) * i;
    out.push(`<line x1="${p.x}" y1="${yOf(v)}" x2="${p.x + p.w}" y2="${yOf(v)}" stroke="#eee"/>`);
    out.push(`<text x="${p.x - 4}" y="${yOf(v) + 4}" text-anchor="end">${v.toFixed(0)}</text>`);
    const t = minT + ((maxT - minT) / 4) * i;
    out.push(`<text x="${xOf(t)}" y="${p.y + p.h + 14}" text-anchor="middle">${t.toFixed(0)}</text>`);
  }
  for (const s of series) {
    const pts = s.pts.map((x) => `${xOf(x.tMs / 1000).toFixed(1)},${yOf(x.rssBytes / 2 ** 20).toFixed(1)}`);
    out.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${color(s.id)}" stroke-width="1.5"/>`);
  }
  return out;
}
