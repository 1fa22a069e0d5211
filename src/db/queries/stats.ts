import type { Sql } from "../connect-database";
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
  return runQuery<UsageDayModelRow>(sql, "platformUsageByDayAndModel", [from, to]);
}

export interface ProviderWindowRow {
  provider_id: string;
  last_minute_count: number;
  cache_read_tokens: number;
  prompt_tokens: number;
}

/** Per provider: requests since `minuteStart`, and cache-read / prompt tokens of succeeded requests since `windowStart`. */
export async function providerRequestWindow(sql: Sql, windowStart: Date, minuteStart: Date): Promise<ProviderWindowRow[]> {
  return runQuery<ProviderWindowRow>(sql, "providerRequestWindow", [windowStart, minuteStart]);
}
