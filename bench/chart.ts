import type { ContenderName } from './contenders/contender';
import { QUANTILE_LEVELS, type LatenessSeries } from './report';

/** Hand-rolled SVG: one panel per rate, each the lateness CDF of both contenders on a log time axis. */
const PANEL_WIDTH = 320;
const PANEL_HEIGHT = 220;
const MARGIN = { top: 40, right: 16, bottom: 44, left: 48 };
const COLORS: Record<ContenderName, string> = {
  sundial: '#1f77b4',
  'sundial-runner': '#2ca02c',
  bullmq: '#ff7f0e',
};
const LABELS: Record<ContenderName, string> = {
  sundial: 'Sundial',
  'sundial-runner': 'Sundial, bare TimerRunner',
  bullmq: 'raw BullMQ',
};
/** Lateness is measured in whole ms: 0 (and any early run) is drawn at this value, the axis's left edge. */
const FLOOR_MS = 0.05;

export function latenessChart(series: readonly LatenessSeries[]): string {
  const rates = [...new Set(series.map((s) => s.rate))];
  const maxLateness = Math.max(1, ...series.flatMap((s) => s.quantiles.filter(Number.isFinite)));
  const decades = Math.max(1, Math.ceil(Math.log10(maxLateness / FLOOR_MS)));
  const width = rates.length * (PANEL_WIDTH + MARGIN.left + MARGIN.right);
  const height = PANEL_HEIGHT + MARGIN.top + MARGIN.bottom + 24;
  const panels = rates.map((rate, index) =>
    panel(
      rate,
      series.filter((s) => s.rate === rate),
      decades,
      index * (PANEL_WIDTH + MARGIN.left + MARGIN.right) + MARGIN.left,
    ),
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
      `font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...panels,
    legend(height - 12),
    '</svg>',
    '',
  ].join('\n');
}

function panel(rate: number, series: readonly LatenessSeries[], decades: number, left: number): string {
  const top = MARGIN.top;
  const x = (ms: number): number =>
    left + (Math.log10(Math.max(ms, FLOOR_MS) / FLOOR_MS) / decades) * PANEL_WIDTH;
  const y = (level: number): number => top + PANEL_HEIGHT - (level / 100) * PANEL_HEIGHT;
  const parts = [
    `<text x="${left + PANEL_WIDTH / 2}" y="${top - 14}" text-anchor="middle" font-size="13">` +
      `fire lateness @ ${rate.toLocaleString('en-US')} timers/s</text>`,
    `<rect x="${left}" y="${top}" width="${PANEL_WIDTH}" height="${PANEL_HEIGHT}" fill="none" stroke="#888"/>`,
  ];
  // Lateness up to 0.05 ms sits on the left edge; gridlines at 0.1, 1, 10, 100, ... ms.
  parts.push(`<text x="${left}" y="${top + PANEL_HEIGHT + 14}" text-anchor="middle">≤0.05</text>`);
  for (let ms = 0.1; ms <= FLOOR_MS * 10 ** decades * 1.0001; ms *= 10) {
    const at = x(ms).toFixed(1);
    parts.push(
      `<line x1="${at}" y1="${top}" x2="${at}" y2="${top + PANEL_HEIGHT}" stroke="#eee"/>`,
      `<text x="${at}" y="${top + PANEL_HEIGHT + 14}" text-anchor="middle">${ms.toLocaleString('en-US')}</text>`,
    );
  }
  for (const level of [0, 25, 50, 75, 100]) {
    parts.push(
      `<line x1="${left}" y1="${y(level)}" x2="${left + PANEL_WIDTH}" y2="${y(level)}" stroke="#eee"/>`,
      `<text x="${left - 4}" y="${y(level) + 4}" text-anchor="end">${level}%</text>`,
    );
  }
  parts.push(
    `<text x="${left + PANEL_WIDTH / 2}" y="${top + PANEL_HEIGHT + 30}" text-anchor="middle">` +
      `run start − due (ms, log scale)</text>`,
  );
  for (const s of series) {
    // A step CDF: the share of runs that started at most this late.
    const points = s.quantiles.flatMap((ms, i) =>
      Number.isFinite(ms) ? [`${x(ms).toFixed(1)},${y(QUANTILE_LEVELS[i]).toFixed(1)}`] : [],
    );
    parts.push(
      `<polyline fill="none" stroke="${COLORS[s.contender]}" stroke-width="2" points="${points.join(' ')}"/>`,
    );
  }
  return parts.join('\n');
}

function legend(baseline: number): string {
  return (Object.keys(LABELS) as ContenderName[])
    .map(
      (name, i) =>
        `<rect x="${MARGIN.left + i * 200}" y="${baseline - 9}" width="14" height="4" fill="${COLORS[name]}"/>` +
        `<text x="${MARGIN.left + i * 200 + 20}" y="${baseline}">${LABELS[name]}</text>`,
    )
    .join('\n');
}
