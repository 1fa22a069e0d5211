import { badRequest } from "../errors/api-error";
import type { Catalog } from "../providers/catalog";
import type { DailyModelUsage } from "./public-figures-service";

/**
 * GET /v1/stats/usage, the public platform usage statistics:
 * platform-wide token figures of succeeded requests, by UTC day and model.
 */

export const DAYS = { min: 1, max: 90, default: 14 } as const;
export const TOP = { min: 1, max: 25, default: 8 } as const;
/** The series bucket that collects every model outside the window's `top` busiest. */
export const OTHER_KEY = "other";
/** The id reported for succeeded records without a model id (should not occur). */
export const UNKNOWN_MODEL_ID = "unknown";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface UsageStatsQuery {
  days: number;
  top: number;
}

export interface UsageStatsModel {
  id: string;
  open_weights: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  request_count: number;
  total_tokens: number;
  token_share: number;
}

export interface UsageStatsDay {
  date: string;
  request_count: number;
  total_tokens: number;
  by_model: Record<string, number>;
}

export interface UsageStats {
  window: { bucket: "day"; days: number; from: string; to: string };
  totals: { prompt_tokens: number; completion_tokens: number; reasoning_tokens: number; request_count: number; total_tokens: number };
  models: UsageStatsModel[];
  open_weight_token_share: number;
  series: UsageStatsDay[];
}

export interface UsageWindow {
  /** Start of the first UTC day, inclusive. */
  from: Date;
  /** The moment the figures are computed, exclusive. */
  to: Date;
  /** YYYY-MM-DD of every UTC day in the window, oldest first; the last is today. */
  dates: string[];
}

/**
 * `days` and `top` from the query string: integers (an optional minus sign and digits),
 * clamped into range; anything else, or the parameter given twice, is a 400.
 */
export function parseUsageStatsQuery(params: URLSearchParams): UsageStatsQuery {
  return {
    days: integerParam(params, "days", DAYS),
    top: integerParam(params, "top", TOP),
  };
}

function integerParam(params: URLSearchParams, name: string, range: { min: number; max: number; default: number }): number {
  const values = params.getAll(name);
  if (values.length === 0) return range.default;
  if (values.length > 1) throw badRequest(`${name} must be given once`);
  const text = values[0]!;
  if (!/^-?\d+$/.test(text)) throw badRequest(`${name} must be an integer, got ${JSON.stringify(text)}`);
  return Math.min(range.max, Math.max(range.min, Number(text)));
}

/** The last `days` UTC days including today: from the start of the first up to `now`. */
export function usageWindow(days: number, now: Date): UsageWindow {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const first = today - (days - 1) * DAY_MS;
  const dates: string[] = [];
  for (let day = first; day <= today; day += DAY_MS) dates.push(new Date(day).toISOString().slice(0, 10));
  return { from: new Date(first), to: now, dates };
}

interface ModelTotals {
  id: string;
  prompt: number;
  completion: number;
  reasoning: number;
  requests: number;
}

/** One UTC day of a summary: its figures, and its tokens by model id. */
interface UsageSummaryDay {
  date: string;
  request_count: number;
  total_tokens: number;
  tokensByModel: Map<string, number>;
}

/**
 * A window's figures for every `top` at once: what the daily figures say, computed once
 * per window and cached; `usageStatsForTop` cuts one caller's answer from it.
 */
export interface UsageSummary {
  window: UsageStats["window"];
  totals: UsageStats["totals"];
  /** Busiest first: the first `top` of them are the ones a series shows by id. */
  models: UsageStatsModel[];
  open_weight_token_share: number;
  days: UsageSummaryDay[];
}

/**
 * The summary of the per-day-and-model figures.
 *
 * - `models`: every model with a succeeded request in the window, busiest first (total
 *   tokens, then request count, then id); never truncated by `top`.
 * - `open_weights` comes from the catalog; a model no longer in it counts as closed.
 * - Shares are fractions of the window's total tokens; with no tokens at all they are 0
 *   (`open_weight_token_share` is always a number, never null).
 */
export function summarizeUsage(usage: readonly DailyModelUsage[], catalog: Catalog, window: UsageWindow): UsageSummary {
  const byModel = new Map<string, ModelTotals>();
  for (const point of usage) {
    const id = modelIdOf(point);
    let totals = byModel.get(id);
    if (totals === undefined) {
      totals = { id, prompt: 0, completion: 0, reasoning: 0, requests: 0 };
      byModel.set(id, totals);
    }
    totals.prompt += point.promptTokens;
    totals.completion += point.completionTokens;
    totals.reasoning += point.reasoningTokens;
    totals.requests += point.requestCount;
  }

  const ranked = [...byModel.values()].sort(
    (a, b) => b.prompt + b.completion - (a.prompt + a.completion) || b.requests - a.requests || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const totals = { prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, request_count: 0, total_tokens: 0 };
  for (const model of ranked) {
    totals.prompt_tokens += model.prompt;
    totals.completion_tokens += model.completion;
    totals.reasoning_tokens += model.reasoning;
    totals.request_count += model.requests;
  }
  // Reasoning is already inside completion: it is not added again.
  totals.total_tokens = totals.prompt_tokens + totals.completion_tokens;
  const share = (tokens: number) => (totals.total_tokens === 0 ? 0 : tokens / totals.total_tokens);

  let openWeightTokens = 0;
  const models: UsageStatsModel[] = ranked.map((model) => {
    const total = model.prompt + model.completion;
    const openWeights = catalog.getModel(model.id)?.openWeights ?? false;
    if (openWeights) openWeightTokens += total;
    return {
      id: model.id,
      open_weights: openWeights,
      prompt_tokens: model.prompt,
      completion_tokens: model.completion,
      request_count: model.requests,
      total_tokens: total,
      token_share: share(total),
    };
  });

  const days = new Map<string, UsageSummaryDay>();
  for (const date of window.dates) days.set(date, { date, request_count: 0, total_tokens: 0, tokensByModel: new Map() });
  for (const point of usage) {
    const day = days.get(point.day);
    if (day === undefined) continue; // outside the window: cannot happen with the query's bounds
    const id = modelIdOf(point);
    const tokens = point.promptTokens + point.completionTokens;
    day.request_count += point.requestCount;
    day.total_tokens += tokens;
    day.tokensByModel.set(id, (day.tokensByModel.get(id) ?? 0) + tokens);
  }

  return {
    window: { bucket: "day", days: window.dates.length, from: window.from.toISOString(), to: window.to.toISOString() },
    totals,
    models,
    open_weight_token_share: share(openWeightTokens),
    days: [...days.values()],
  };
}

/**
 * One caller's answer: `series[].by_model` holds the window's `top` busiest models on
 * every day (0 on days they had no traffic), and `other` appears on every day exactly
 * when the window has more than `top` models, so each item has the same keys. A window
 * without traffic has empty `by_model` objects.
 */
export function usageStatsForTop(summary: UsageSummary, top: number): UsageStats {
  const topIds = summary.models.slice(0, top).map((model) => model.id);
  const folds = summary.models.length > top;
  const series = summary.days.map((day): UsageStatsDay => {
    const byModel: Record<string, number> = {};
    let shown = 0;
    for (const id of topIds) {
      const tokens = day.tokensByModel.get(id) ?? 0;
      byModel[id] = tokens;
      shown += tokens;
    }
    if (folds) byModel[OTHER_KEY] = day.total_tokens - shown;
    return { date: day.date, request_count: day.request_count, total_tokens: day.total_tokens, by_model: byModel };
  });
  return {
    window: summary.window,
    totals: summary.totals,
    models: summary.models,
    open_weight_token_share: summary.open_weight_token_share,
    series,
  };
}

function modelIdOf(point: DailyModelUsage): string {
  return point.modelId === "" ? UNKNOWN_MODEL_ID : point.modelId;
}
