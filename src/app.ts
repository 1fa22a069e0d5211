import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import { ApiError, errorResponse } from "./errors/api-error";
import { log } from "./observability/log";
import type { Services } from "./services";
import { publicRoutes } from "./public/public-routes";
import { adminRoutes } from "./admin/admin-routes";
import { namespaceRoutes } from "./management/namespaces/namespace-routes";
import { keyRoutes } from "./management/keys/key-routes";
import { inferenceProtocolOf, inferenceRoutes, pathOf, type RequestHooks } from "./inference/inference-routes";
import { errorInProtocol } from "./inference/inference-error";
import { requestIdFrom } from "./inference/request-id";
import { irError } from "./ir";
import { usageRoutes } from "./management/usage/usage-routes";
import { billingRoutes } from "./management/billing/billing-routes";
import { discoveryRoutes } from "./public/discovery-routes";
import { statsRoutes } from "./public/stats-routes";

/** A readable one-line summary of a TypeBox validation failure. */
function describeValidation(error: unknown): string {
  const all = (error as { all?: Array<{ path?: string; message?: string; summary?: string }> }).all;
  const first = Array.isArray(all) ? all[0] : undefined;
  if (!first) return "request body does not match the expected schema";
  const field = first.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : "body";
  if (first.message?.includes("Unexpected property") || first.summary?.includes("Unexpected property")) return `unknown field: ${field}`;
  return `${field || "body"}: ${first.summary ?? first.message ?? "invalid value"}`;
}

/**
 * What happens around every request, whichever router serves it (Elysia, or Bun's own
 * for the inference paths): the body limit from Content-Length, before anything reads
 * the body, and the HTTP metrics.
 */
export function createRequestHooks(services: Services): RequestHooks {
  const { config, metrics } = services;
  return {
    before(request, path) {
      metrics.inFlight.inc();
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length <= 0) return undefined;
      const protocol = inferenceProtocolOf(path);
      const limit = protocol ? config.maxInferenceBodyBytes : config.maxManagementBodyBytes;
      if (length <= limit) return undefined;
      const description = `request body exceeds ${limit} bytes`;
      // An inference client gets the error in its own protocol, like every other inference error.
      if (protocol) return errorInProtocol(protocol, irError("payload_too_large", description), requestIdFrom(request.headers));
      return errorResponse(new ApiError("payload_too_large", description));
    },
    after(route, method, status, startedAt) {
      metrics.inFlight.dec();
      metrics.httpRequests.inc([route, method, String(status)]);
      metrics.httpDuration.observe([route, method], (performance.now() - startedAt) / 1000);
    },
  };
}

const startTimes = new WeakMap<Request, number>();

export function createApp(services: Services, hooks: RequestHooks = createRequestHooks(services)) {
  // normalize: false — unknown body fields are refused (400), not silently stripped.
  return new Elysia({ normalize: false })
    .use(
      openapi({
        path: "/openapi",
        specPath: "/openapi/json",
        provider: null,
        documentation: {
          info: {
            title: "Switchyard",
            version: "0.1.0",
            description: "Hosted LLM routing gateway: four inference protocols, account-bound management. Each route's required scope is in `x-scope`.",
          },
          components: {
            securitySchemes: {
              bearer: { type: "http", scheme: "bearer" },
              apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
            },
          },
          security: [{ bearer: [] }, { apiKey: [] }],
        },
      }),
    )
    .onRequest(({ request }) => {
      startTimes.set(request, performance.now());
      return hooks.before(request, pathOf(request.url));
    })
    .onAfterResponse(({ request, route, set }) => {
      const status = typeof set.status === "number" ? set.status : 200;
      hooks.after(route || "unmatched", request.method, status, startTimes.get(request) ?? performance.now());
    })
    .onError(({ code, error, request }) => {
      if (error instanceof ApiError) return errorResponse(error);
      switch (code) {
        case "VALIDATION":
          return errorResponse(new ApiError("bad_request", describeValidation(error)));
        case "PARSE":
          return errorResponse(new ApiError("bad_request", "request body is not valid JSON"));
        case "NOT_FOUND":
          return errorResponse(new ApiError("not_found", "route not found"));
        default: {
          const status = (error as { status?: unknown }).status;
          if (status === 413) return errorResponse(new ApiError("payload_too_large", "request body is too large"));
          log.error("unhandled error", { method: request.method, path: new URL(request.url).pathname, error: String(error) });
          return errorResponse(new ApiError("internal", "internal error"));
        }
      }
    })
    .use(publicRoutes(services))
    .use(adminRoutes(services))
    .use(namespaceRoutes(services))
    .use(keyRoutes(services))
    .use(usageRoutes(services))
    .use(billingRoutes(services))
    .use(discoveryRoutes(services))
    .use(statsRoutes(services))
    .use(inferenceRoutes(services));
}

export type App = ReturnType<typeof createApp>;
