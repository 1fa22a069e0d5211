import { Elysia } from "elysia";
import type { Services } from "../services";
import { databaseAnswers } from "./public-figures-service";
import { docsRoutes } from "./docs-routes";

export function publicRoutes(services: Services) {
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
      () => new Response(services.metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } }),
      { detail: { summary: "Prometheus metrics (text format 0.0.4)", tags: ["public"] } },
    )
    .use(docsRoutes());
}
