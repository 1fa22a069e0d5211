import { html, type SafeHtml } from "./html";

/**
 * Charts drawn on the server as SVG: no script, no library, nothing fetched. Colours are
 * SVG attributes (not CSS), so the page's Content-Security-Policy needs nothing more.
 * Each chart is an image with a <title> and a <desc>, a legend in HTML, and the figures
 * again as a table for anyone who cannot see the chart.
 */

/** Eight colours that stay apart for the common colour-vision deficiencies (Okabe–Ito, with grey for "other"). */
export const SERIES_COLOURS = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442", "#8c959f"] as const;

export interface ChartSeries {
  label: string;
  /** One value per day, in the order of `days`. */
  values: readonly number[];
}

export interface StackedBarChart {
  /** Unique on the page: prefixes the ids of the title and description. */
  id: string;
  title: string;
  description: string;
  /** UTC dates, `YYYY-MM-DD`, oldest first. */
  days: readonly string[];
  series: readonly ChartSeries[];
  format: (value: number) => string;
}

const WIDTH = 720;
const HEIGHT = 240;
const LEFT = 64;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 26;

/** The smallest of 1, 2, 2.5, 5 × 10^n at or above `value` (a y axis that ends on a round figure). */
export function niceCeiling(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

/** `2026-11-27` as `Nov 27`. */
function shortDay(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
}

/** Which days get a label under the axis: about six, always the first and the last. */
function labelledDays(count: number): Set<number> {
  const step = Math.max(1, Math.ceil(count / 6));
  const picked = new Set<number>();
  for (let index = 0; index < count; index += step) picked.add(index);
  picked.add(count - 1);
  return picked;
}

function round(value: number): string {
  return (Math.round(value * 10) / 10).toString();
}

/** The chart as an SVG image: one bar per day, the series stacked in the legend's order. */
function chartSvg(chart: StackedBarChart): SafeHtml {
  const totals = chart.days.map((_, day) => chart.series.reduce((sum, series) => sum + (series.values[day] ?? 0), 0));
  // Four gridline steps of a round size, never finer than one unit (a request, a micro-dollar).
  const step = Math.max(1, niceCeiling(Math.max(0, ...totals) / 4));
  const top = step * 4;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, chart.days.length);
  const barWidth = Math.max(1, slot * 0.72);
  const y = (value: number) => TOP + plotHeight - (value / top) * plotHeight;
  const grid = [0, 0.25, 0.5, 0.75, 1].map((fraction) => {
    const at = round(y(top * fraction));
    return html`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${at}" y2="${at}" stroke="#d0d7de" stroke-width="1"/><text x="${LEFT - 6}" y="${at}" dy="4" text-anchor="end">${chart.format(top * fraction)}</text>`;
  });
  const labelled = labelledDays(chart.days.length);
  const bars = chart.days.map((day, index) => {
    const x = LEFT + index * slot + (slot - barWidth) / 2;
    let base = 0;
    const rects = chart.series.map((series, seriesIndex) => {
      const value = series.values[index] ?? 0;
      if (value <= 0) return "";
      const from = y(base);
      base += value;
      const to = y(base);
      return html`<rect x="${round(x)}" y="${round(to)}" width="${round(barWidth)}" height="${round(Math.max(0.5, from - to))}" fill="${SERIES_COLOURS[seriesIndex % SERIES_COLOURS.length]}"><title>${day} · ${series.label}: ${chart.format(value)}</title></rect>`;
    });
    const label = labelled.has(index) ? html`<text x="${round(x + barWidth / 2)}" y="${HEIGHT - 8}" text-anchor="middle">${shortDay(day)}</text>` : "";
    return html`<g>${rects}${label}</g>`;
  });
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${chart.id}-title ${chart.id}-desc" font-size="11" fill="#57606a">
<title id="${chart.id}-title">${chart.title}</title><desc id="${chart.id}-desc">${chart.description}</desc>
${grid}${bars}<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${y(0)}" y2="${y(0)}" stroke="#57606a" stroke-width="1"/></svg>`;
}

function legend(series: readonly ChartSeries[]): SafeHtml {
  return html`<ul class="legend">${series.map(
    (entry, index) =>
      html`<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" rx="2" fill="${SERIES_COLOURS[index % SERIES_COLOURS.length]}"/></svg> ${entry.label}</li>`,
  )}</ul>`;
}

/** The chart's figures as a table: a row per day that has any, a column per series. */
function dataTable(chart: StackedBarChart): SafeHtml {
  const rows = chart.days
    .map((day, index) => ({ day, values: chart.series.map((series) => series.values[index] ?? 0) }))
    .filter((row) => row.values.some((value) => value !== 0));
  return html`<details><summary>${chart.title} as a table</summary><div class="scroll"><table class="figures">
<thead><tr><th scope="col">Day</th>${chart.series.map((series) => html`<th scope="col">${series.label}</th>`)}</tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="${chart.series.length + 1}">Nothing in this period.</td></tr>` : rows.map((row) => html`<tr><th scope="row">${row.day}</th>${row.values.map((value) => html`<td>${chart.format(value)}</td>`)}</tr>`)}</tbody>
</table></div></details>`;
}

/** A stacked bar chart in a figure: heading, image, legend, and its table. */
export function stackedBarChart(chart: StackedBarChart): SafeHtml {
  return html`<figure class="chart-card" id="${chart.id}"><figcaption><h3>${chart.title}</h3></figcaption>
${chartSvg(chart)}
${chart.series.length > 1 || chart.series[0]?.label ? legend(chart.series) : ""}
${dataTable(chart)}</figure>`;
}

/**
 * A horizontal bar of how much of a limit is used: `used` solid, `reserved` hatched
 * lighter after it, the rest empty. Labelled in words for assistive technology.
 */
export function usageBar(used: number, reserved: number, limit: number, label: string, blocked = false): SafeHtml {
  const share = (value: number) => (limit <= 0 ? 0 : Math.max(0, Math.min(100, (value / limit) * 100)));
  const usedShare = share(used);
  const reservedShare = Math.min(100 - usedShare, share(reserved));
  // A blocked budget is red whatever its share: the room left cannot hold any request, so a
  // green bar would promise requests that are all refused. Its unusable rest is pale red.
  const colour = blocked || usedShare + reservedShare >= 90 ? "#b42318" : usedShare + reservedShare >= 70 ? "#b76e00" : "#1a7f37";
  return html`<svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" role="img" aria-label="${label}"><rect width="100" height="8" rx="1.5" fill="${blocked ? "#f6d3d0" : "#e6e9ed"}"/>${
    usedShare > 0 ? html`<rect width="${round(usedShare)}" height="8" rx="1.5" fill="${colour}"/>` : ""
  }${reservedShare > 0 ? html`<rect x="${round(usedShare)}" width="${round(reservedShare)}" height="8" fill="${colour}" fill-opacity="0.4"/>` : ""}</svg>`;
}
