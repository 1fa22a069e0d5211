import type { Sql } from "../connect-database";
import { DAY_MS, MINUTE_MS, splitAtWhole } from "./rollup-window";
import { runQuery } from "./run-query";

/** One UTC day × model of succeeded requests (sql/queries/stats.sql). */
export interface UsageDayModelRow {
  /** YYYY-MM-DD, UTC. */
  day: string;
  /** '' when the record has no model id. */
  model_id: string;
  request_count: number;
  prompt_tokens: number;
  /** Includes reasoning tokens. */
  completion_tokens: number;
  reasoning_tokens: number;
}

/** Succeeded requests created in [from, to), grouped by UTC day and model. */
export async function platformUsageByDayAndModel(sql: Sql, from: Date, to: Date): Promise<UsageDayModelRow[]> {
  const { wholeFrom, wholeTo } = splitAtWhole(from, to, DAY_MS);
  return runQuery<UsageDayModelRow>(sql, "platformUsageByDayAndModel", [from, to, wholeFrom, wholeTo]);
}

export interface ProviderWindowRow {
  provider_id: string;
  last_minute_count: number;
  cache_read_tokens: number;
  prompt_tokens: number;
}

/** Per provider: requests since `minuteStart`, and cache-read / prompt tokens of succeeded requests since `windowStart`. */
export async function providerRequestWindow(sql: Sql, windowStart: Date, minuteStart: Date): Promise<ProviderWindowRow[]> {
  // Whole minutes up to the last minute's: records from the start of its minute on.
  const { wholeFrom, wholeTo } = splitAtWhole(windowStart, minuteStart, MINUTE_MS);
  return runQuery<ProviderWindowRow>(sql, "providerRequestWindow", [windowStart, minuteStart, wholeFrom, wholeTo]);
}
