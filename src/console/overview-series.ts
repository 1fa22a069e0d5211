import type { DailyUsage } from "../management/usage/usage-service";
import type { ChartSeries } from "./svg-chart";

export type DailyMetric = (row: DailyUsage) => number;

/** The series a chart shows at most: the biggest groups, the rest folded into "Other". */
const MAX_SERIES = 6;

/** The UTC days from `from` to `to` (both included), oldest first, as `YYYY-MM-DD`. */
export function daysBetween(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let at = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); at <= to.getTime(); at += 86_400_000) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  return days;
}

export interface GroupSums {
  group: string | null;
  requests: number;
  tokens: number;
  spendMicroUsd: number;
}

/** Each group's requests, tokens and spend over the rows: most spend first, then most requests. */
export function groupSums(rows: readonly DailyUsage[]): GroupSums[] {
  const sums = new Map<string | null, GroupSums>();
  for (const row of rows) {
    const sum = sums.get(row.group) ?? { group: row.group, requests: 0, tokens: 0, spendMicroUsd: 0 };
    sum.requests += row.request_count;
    sum.tokens += row.prompt_tokens + row.completion_tokens;
    sum.spendMicroUsd += row.spend_micro_usd;
    sums.set(row.group, sum);
  }
  return [...sums.values()].sort((a, b) => b.spendMicroUsd - a.spendMicroUsd || b.requests - a.requests);
}

/**
 * The rows as chart series, one per group in `order` (the same order, so the same colour,
 * in every chart of a page): at most six, the groups after the fifth summed as "Other" so
 * a long tail never hides the main ones. `label` names a group.
 */
export function stackedSeries(rows: readonly DailyUsage[], days: readonly string[], metric: DailyMetric, label: (group: string | null) => string, order: readonly (string | null)[]): ChartSeries[] {
  const ranked = order.map((group) => ({ group }));
  const shown = ranked.length > MAX_SERIES ? ranked.slice(0, MAX_SERIES - 1) : ranked;
  const position = new Map(days.map((day, index) => [day, index]));
  const series = shown.map((entry) => ({ group: entry.group, label: label(entry.group), values: days.map(() => 0) }));
  const byGroup = new Map(series.map((entry) => [entry.group, entry]));
  const other = ranked.length > shown.length ? { group: undefined, label: "Other", values: days.map(() => 0) } : undefined;
  for (const row of rows) {
    const index = position.get(row.date);
    if (index === undefined) continue;
    const target = byGroup.get(row.group) ?? other;
    if (target) target.values[index]! += metric(row);
  }
  return [...series, ...(other ? [other] : [])].map(({ label: name, values }) => ({ label: name, values }));
}
