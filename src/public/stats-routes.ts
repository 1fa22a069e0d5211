import { Elysia } from "elysia";
import type { Services } from "../services";
import { platformUsage } from "./public-figures-service";
import { ttlCachePerOwner } from "./ttl-cache";
import { DAYS, parseUsageStatsQuery, summarizeUsage, TOP, usageStatsForTop, usageWindow, type UsageSummary } from "./usage-stats";

/** Cache lifetime of the platform usage statistics (5 minutes). */
export const USAGE_STATS_TTL_MS = 5 * 60 * 1000;

/**
 * The usage-statistics cache of one running app (one per Services), keyed by `days`
 * alone: `top` only decides how much of the summary one answer shows, so every `top`
 * shares one computation. Exposed so tests can clear it or move its clock.
 */
export const usageStatsCache = ttlCachePerOwner<UsageSummary>(USAGE_STATS_TTL_MS);

/** GET /v1/stats/usage: public, platform-wide token statistics, cached 5 minutes. */
export function statsRoutes(services: Services) {
  const cache = usageStatsCache(services);
  return new Elysia({ name: "stats", normalize: false }).get(
    "/v1/stats/usage",
    async ({ request, set }) => {
      const { days, top } = parseUsageStatsQuery(new URL(request.url).searchParams);
      const { value, expiresAt } = await cache.get(String(days), async () => {
        const window = usageWindow(days, new Date());
        return summarizeUsage(await platformUsage(services, window.from, window.to), services.catalog, window);
      });
      // Shared caches may keep it only for what is left of our own lifetime.
      const remaining = Math.max(0, Math.ceil((expiresAt - cache.now()) / 1000));
      set.headers["cache-control"] = `public, max-age=${remaining}`;
      return usageStatsForTop(value, top);
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
