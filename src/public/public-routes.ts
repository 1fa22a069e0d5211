import { Elysia } from "elysia";
import { constantTimeEqual, sha256 } from "../auth/tokens";
import { unauthorized } from "../errors/api-error";
import type { Services } from "../services";
import { databaseAnswers } from "./public-figures-service";
import { docsRoutes } from "./docs-routes";

/**
 * With METRICS_TOKEN set, /metrics answers only `Authorization: Bearer <token>` (what a
 * Prometheus `authorization` block sends): its series show every provider's traffic and
 * error rates, which should not be public wherever the port is reachable. Both sides are
 * hashed, so the comparison takes the same time whatever the lengths.
 */
function metricsGuard(token: string | undefined): (headers: Headers) => void {
  if (token === undefined) return () => {};
  const expected = sha256(token);
  return (headers) => {
    const presented = /^bearer[ \t]+(.+)$/i.exec(headers.get("authorization") ?? "")?.[1]?.trim();
    if (presented === undefined || !constantTimeEqual(sha256(presented), expected)) {
      throw unauthorized("missing or invalid metrics token: send Authorization: Bearer <METRICS_TOKEN>");
    }
  };
}

export function publicRoutes(services: Services) {
  const guardMetrics = metricsGuard(services.config.metricsToken);
  return new Elysia({ name: "public", normalize: false })
    .get("/ping", () => new Response(null, { status: 200 }), { detail: { summary: "Liveness probe: 200, empty body", tags: ["public"] } })
    .get(
      "/ready",
      async () => {
        const state = await services.readiness.check();
        const body = state.ready ? { status: "ready" } : { status: "not_ready", reason: state.reason };
        return Response.json(body, { status: state.ready ? 200 : 503, headers: { "cache-control": "no-store" } });
      },
      {
        detail: {
          summary: 'Readiness probe: 200 {"status":"ready"} while the database answers with every migration applied; 503 {"status":"not_ready","reason"} otherwise, and from SIGTERM on',
          tags: ["public"],
        },
      },
    )
    .get(
      "/health",
      async ({ set }) => {
        if (await databaseAnswers(services)) return { status: "ok", database: "ok" };
        set.status = 503;
        return { status: "degraded", database: "unreachable" };
      },
      { detail: { summary: "Health, including database reachability", tags: ["public"] } },
    )
    .get(
      "/metrics",
      ({ request }) => {
        guardMetrics(request.headers);
        return new Response(services.metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
      },
      { detail: { summary: "Prometheus metrics (text format 0.0.4); with METRICS_TOKEN set, only for Authorization: Bearer <METRICS_TOKEN>", tags: ["public"] } },
    )
    .use(docsRoutes());
}
