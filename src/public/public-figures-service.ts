import { pingDatabase } from "../db/queries/health";
import { platformUsageByDayAndModel, providerRequestWindow, type ProviderWindowRow, type UsageDayModelRow } from "../db/queries/stats";
import type { Services } from "../services";
import { OneAtATime } from "./one-at-a-time";

/**
 * What the public routes read from the database: the health check's ping, the platform
 * usage statistics and the discovery routes' request window. No tenant: these figures are
 * the platform's, never one account's. The figures come from the read pool: anonymous
 * callers never take a connection admission needs.
 */
export type PublicFiguresDeps = Pick<Services, "db">;

/** True when the database answers. */
export async function databaseAnswers(deps: PublicFiguresDeps): Promise<boolean> {
  try {
    await pingDatabase(deps.db.sql);
    return true;
  } catch {
    return false;
  }
}

/** One queue of public computations per database (per running app). */
const queues = new WeakMap<object, OneAtATime>();

function publicQueue(deps: PublicFiguresDeps): OneAtATime {
  let queue = queues.get(deps.db);
  if (queue === undefined) {
    queue = new OneAtATime();
    queues.set(deps.db, queue);
  }
  return queue;
}

/** One UTC day and model of the platform's succeeded requests: a point of GET /v1/stats/usage. */
export interface DailyModelUsage {
  /** YYYY-MM-DD, UTC. */
  day: string;
  /** '' when the records have no model id. */
  modelId: string;
  requestCount: number;
  promptTokens: number;
  /** Includes reasoning tokens. */
  completionTokens: number;
  reasoningTokens: number;
}

function dailyModelUsage(row: UsageDayModelRow): DailyModelUsage {
  return {
    day: row.day,
    modelId: row.model_id,
    requestCount: row.request_count,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    reasoningTokens: row.reasoning_tokens,
  };
}

/** One provider's recent requests, the figures GET /v1/providers adds to its live telemetry. */
export interface ProviderRecentTraffic {
  providerId: string;
  /** Requests of every status since the start of the last minute. */
  lastMinuteRequests: number;
  /** Cache-read and prompt tokens (which include them) of succeeded requests in the window. */
  cacheReadTokens: number;
  promptTokens: number;
}

function providerRecentTraffic(row: ProviderWindowRow): ProviderRecentTraffic {
  return { providerId: row.provider_id, lastMinuteRequests: row.last_minute_count, cacheReadTokens: row.cache_read_tokens, promptTokens: row.prompt_tokens };
}

/** Succeeded requests created in [from, to), grouped by UTC day and model. */
export async function platformUsage(deps: PublicFiguresDeps, from: Date, to: Date): Promise<DailyModelUsage[]> {
  const rows = await publicQueue(deps).run(() => platformUsageByDayAndModel(deps.db.read, from, to));
  return rows.map(dailyModelUsage);
}

/** Per provider: requests since `minuteStart`, and cache-read / prompt tokens of succeeded requests since `windowStart`. */
export async function providerWindow(deps: PublicFiguresDeps, windowStart: Date, minuteStart: Date): Promise<ProviderRecentTraffic[]> {
  const rows = await publicQueue(deps).run(() => providerRequestWindow(deps.db.read, windowStart, minuteStart));
  return rows.map(providerRecentTraffic);
}
