/** One line of a panel: its legend and its points (epoch seconds, value). */
export interface Line {
  readonly label: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface PanelData {
  readonly title: string;
  readonly unit: string;
  readonly lines: readonly Line[];
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function format(v: number, unit: string): string {
  if (unit === 's') return v >= 1 ? `${v.toFixed(2)} s` : `${(v * 1000).toPrecision(3)} ms`;
  if (Math.abs(v) >= 1000) return `${(v / 1000).toFixed(1)}k`;
  return Number.isInteger(v) ? String(v) : v.toPrecision(3);
}

/** One panel as SVG elements at (x, y): title, axes, one polyline per series, a legend below. */
function panel(p: PanelData, x: number, y: number, w: number, h: number): string[] {
  const out: string[] = [];
  const plot = { x: x + 60, y: y + 28, w: w - 80, h: h - 150 };
  out.push(`<rect x="${x}" y="${y}" width="${w}" height="${h}" fill="#fbfbfb" stroke="#ddd"/>`);
  out.push(`<text x="${x + 10}" y="${y + 18}" font-size="13" font-weight="bold">${esc(p.title)}</text>`);
  const all = p.lines.flatMap((l) => l.points);
  if (all.length === 0) {
    out.push(`<text x="${x + w / 2}" y="${y + h / 2}" text-anchor="middle" fill="#999">no data</text>`);
    return out;
  }
  const t0 = Math.min(...all.map((q) => q[0]));
  const t1 = Math.max(...all.map((q) => q[0]));
  // A panel of zeros gets an axis up to 1, not one of nanounits.
  const max = Math.max(...all.map((q) => q[1]));
  const vmax = (max > 0 ? max : 1) * 1.1;
  const px = (t: number) => plot.x + ((t - t0) / Math.max(1, t1 - t0)) * plot.w;
  const py = (v: number) => plot.y + plot.h - (v / vmax) * plot.h;
  out.push(`<line x1="${plot.x}" y1="${plot.y + plot.h}" x2="${plot.x + plot.w}" y2="${plot.y + plot.h}" stroke="#888"/>`);
  out.push(`<line x1="${plot.x}" y1="${plot.y}" x2="${plot.x}" y2="${plot.y + plot.h}" stroke="#888"/>`);
  for (let i = 0; i <= 4; i++) {
    const v = (vmax * i) / 4;
    out.push(`<line x1="${plot.x}" y1="${py(v)}" x2="${plot.x + plot.w}" y2="${py(v)}" stroke="#eee"/>`);
    out.push(`<text x="${plot.x - 4}" y="${py(v) + 4}" text-anchor="end" font-size="10">${format(v, p.unit)}</text>`);
  }
  out.push(`<text x="${plot.x}" y="${plot.y + plot.h + 14}" font-size="10">0 s</text>`);
  out.push(`<text x="${plot.x + plot.w}" y="${plot.y + plot.h + 14}" text-anchor="end" font-size="10">${Math.round(t1 - t0)} s</text>`);
  p.lines.forEach((l, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${l.points.map(([t, v]) => `${px(t).toFixed(1)},${py(v).toFixed(1)}`).join(' ')}"/>`,
    );
    const lx = x + 10 + (i % 2) * (w / 2);
    const ly = y + h - 98 + Math.floor(i / 2) * 14;
    if (ly < y + h - 4) {
      const last = l.points.at(-1)?.[1];
      out.push(`<rect x="${lx}" y="${ly - 8}" width="10" height="3" fill="${color}"/>`);
      out.push(`<text x="${lx + 14}" y="${ly - 4}" font-size="10">${esc(l.label)}${last !== undefined ? ` (last ${format(last, p.unit)})` : ''}</text>`);
    }
  });
  return out;
}

/** The panels in a grid of `columns`, as one self-contained SVG. */
export function dashboardSvg(title: string, panels: readonly PanelData[], columns = 2): string {
  const w = 620;
  const h = 340;
  const rows = Math.ceil(panels.length / columns);
  const width = columns * w + 20;
  const height = rows * h + 50;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
  ];
  out.push(`<text x="${width / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${esc(title)}</text>`);
  panels.forEach((p, i) => out.push(...panel(p, 10 + (i % columns) * w, 40 + Math.floor(i / columns) * h, w - 10, h - 10)));
  out.push('</svg>');
  return out.join('\n');
}
