import { Elysia } from "elysia";
import type { Services } from "../services";
import { platformUsage } from "./public-figures-service";
import { TtlCache } from "./ttl-cache";
import { buildUsageStats, DAYS, parseUsageStatsQuery, TOP, usageWindow, type UsageStats } from "./usage-stats";

/** Cache lifetime of the platform usage statistics (5 minutes). */
export const USAGE_STATS_TTL_MS = 5 * 60 * 1000;

const caches = new WeakMap<Services, TtlCache<UsageStats>>();

/**
 * The usage-statistics cache of one running app (one per Services), keyed by
 * (days, top). Exposed so tests can clear it or move its clock.
 */
export function usageStatsCache(services: Services): TtlCache<UsageStats> {
  let cache = caches.get(services);
  if (cache === undefined) {
    cache = new TtlCache<UsageStats>(USAGE_STATS_TTL_MS);
    caches.set(services, cache);
  }
  return cache;
}

/** GET /v1/stats/usage: public, platform-wide token statistics, cached 5 minutes. */
export function statsRoutes(services: Services) {
  const cache = usageStatsCache(services);
  return new Elysia({ name: "stats", normalize: false }).get(
    "/v1/stats/usage",
    async ({ request, set }) => {
      const { days, top } = parseUsageStatsQuery(new URL(request.url).searchParams);
      const { value, expiresAt } = await cache.get(`${days}:${top}`, async () => {
        const window = usageWindow(days, new Date());
        const rows = await platformUsage(services, window.from, window.to);
        return buildUsageStats(rows, services.catalog, window, top);
      });
      // Shared caches may keep it only for what is left of our own lifetime.
      const remaining = Math.max(0, Math.ceil((expiresAt - cache.now()) / 1000));
      set.headers["cache-control"] = `public, max-age=${remaining}`;
      return value;
    },
    {
      detail: {
        summary: "Platform usage statistics: tokens of succeeded requests by UTC day and model (query days 1–90, top 1–25; cached 5 minutes)",
        tags: ["public"],
        parameters: [
          queryParameter("days", "UTC days including today; out-of-range values are clamped", DAYS),
          queryParameter("top", "models shown by id per day in series; the rest are folded into `other`", TOP),
        ],
      },
    },
  );
}

function queryParameter(name: string, description: string, range: { min: number; max: number; default: number }) {
  return {
    name,
    in: "query" as const,
    required: false,
    description,
    schema: { type: "integer" as const, minimum: range.min, maximum: range.max, default: range.default },
  };
}
