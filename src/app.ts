import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import { ApiError, errorResponse, isManagementError } from "./errors/api-error";
import { queryTooLong, replicaConflict } from "./errors/query-timeout";
import { isReplicaConflict, isStatementTimeout } from "./db/errors";
import { credentialRouteKey, credentialRouteKeys } from "./auth/credential-routes";
import { markNoStore } from "./auth/tokens";
import { log } from "./observability/log";
import type { Services } from "./services";
import { publicRoutes } from "./public/public-routes";
import { adminRoutes } from "./admin/admin-routes";
import { namespaceRoutes } from "./management/namespaces/namespace-routes";
import { accountKeyRoutes, keyRoutes } from "./management/keys/key-routes";
import { inferenceRoutes, isInferenceRoute } from "./inference/inference-routes";
import type { RequestHooks } from "./http/request-hooks";
import { pathOf } from "./http/request-path";
import { parseManagementBody } from "./management/parse-management-body";
import { usageRoutes } from "./management/usage/usage-routes";
import { billingRoutes } from "./management/billing/billing-routes";
import { policyRoutes } from "./management/policies/policy-routes";
import { budgetRoutes } from "./management/policies/budget-routes";
import { policyPresetRoutes } from "./management/policies/policy-preset-routes";
import { routingPresetRoutes } from "./management/routing-presets/routing-preset-routes";
import { discoveryRoutes } from "./public/discovery-routes";
import { statsRoutes } from "./public/stats-routes";
import { byokPubkeyRoutes } from "./public/byok-pubkey-routes";
import { byokKeyRoutes } from "./management/byok/byok-key-routes";
import { accountRoutes } from "./management/account/account-routes";
import { consoleRoutes } from "./console/console-routes";
import { createConsoleContext } from "./console/console-context";
import { consoleSessionApprover } from "./console/session-approver";
import { deviceRoutes } from "./console/device-routes";
import { consentRoutes } from "./console/consent-routes";
import { managementPageRoutes } from "./console/management-page-routes";
import { rootRoute } from "./console/root-route";
import { oauthClientRoutes } from "./management/oauth-clients/oauth-client-routes";
import { oauthGrantRoutes } from "./management/oauth-clients/oauth-grant-routes";
import { OAUTH_FORM_PATHS, oauthRoutes } from "./oauth/oauth-routes";

/** A readable one-line summary of a TypeBox validation failure. */
function describeValidation(error: unknown): string {
  const all = (error as { all?: Array<{ path?: string; message?: string; summary?: string }> }).all;
  const first = Array.isArray(all) ? all[0] : undefined;
  if (!first) return "request body does not match the expected schema";
  const field = first.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : "body";
  if (first.message?.includes("Unexpected property") || first.summary?.includes("Unexpected property")) return `unknown field: ${field}`;
  return `${field || "body"}: ${first.summary ?? first.message ?? "invalid value"}`;
}

const startTimes = new WeakMap<Request, number>();

/** The metrics' route label of a request refused before Elysia routed it (its body too large). */
const REFUSED_BEFORE_ROUTING = "refused";

/**
 * The status the client was sent: a handler's own Response carries it; otherwise
 * `set.status`, which onError keeps in step with its error answer.
 */
function sentStatus(responseValue: unknown, status: unknown): number {
  if (responseValue instanceof Response) return responseValue.status;
  return typeof status === "number" ? status : 200;
}

/** The answer to an error: management errors as `{ error, error_description }`. */
function errorAnswer(code: unknown, error: unknown, request: Request): Response {
  if (isManagementError(error)) return errorResponse(error);
  switch (code) {
    case "VALIDATION":
      return errorResponse(new ApiError("invalid_request", describeValidation(error)));
    case "PARSE": {
      // Elysia wraps what the body parser throws (413, invalid JSON) in its ParseError.
      const cause = (error as { cause?: unknown }).cause;
      return errorResponse(isManagementError(cause) ? cause : new ApiError("invalid_request", "request body is not valid JSON"));
    }
    case "NOT_FOUND":
      return errorResponse(new ApiError("not_found", "route not found"));
    default: {
      const status = (error as { status?: unknown }).status;
      if (status === 413) return errorResponse(new ApiError("payload_too_large", "request body is too large"));
      if (isStatementTimeout(error)) {
        log.warn("read stopped by its statement timeout", { method: request.method, path: pathOf(request.url) });
        return errorResponse(queryTooLong());
      }
      if (isReplicaConflict(error)) {
        log.warn("read cancelled by the replica's conflict with recovery", { method: request.method, path: pathOf(request.url) });
        return errorResponse(replicaConflict());
      }
      log.error("unhandled error", { method: request.method, path: pathOf(request.url), error: String(error) });
      return errorResponse(new ApiError("internal", "internal error"));
    }
  }
}

export function createApp(services: Services, hooks: RequestHooks) {
  const consoleContext = createConsoleContext(services);
  // The routes whose answers need a credential, read from the finished route table at the
  // first answer (credential-routes.ts).
  let credentialRoutes: Set<string> | undefined;
  // normalize: false — unknown body fields are refused (400), not silently stripped.
  const app = new Elysia({ normalize: false })
    .use(
      openapi({
        path: "/openapi",
        specPath: "/openapi/json",
        provider: null,
        // Not the default "static file" exclusion of every path with a dot: it would hide
        // /.well-known/oauth-authorization-server. OPTIONS (CORS preflights) stay out.
        exclude: { staticFile: false },
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
      const startedAt = performance.now();
      startTimes.set(request, startedAt);
      const refusal = hooks.before(request, pathOf(request.url));
      // Elysia runs no afterResponse hook for an answer given here: it is counted now.
      if (refusal !== undefined) hooks.after(REFUSED_BEFORE_ROUTING, request.method, refusal.status, startedAt, request);
      return refusal;
    })
    // Every Elysia body is read within the management limit, chunked or not. Inference
    // routes (matched by route, so `/v1/messages/` counts too) read their own: null marks
    // the body as handled, leaving the stream unread (undefined would let Elysia's default
    // parser consume it). The OAuth form endpoints read theirs too (oauth-routes.ts).
    .onParse({ as: "global" }, ({ request, contentType, route }) =>
      isInferenceRoute(route) || OAUTH_FORM_PATHS.has(route) ? null : parseManagementBody(request, contentType, services.config.maxManagementBodyBytes),
    )
    .onAfterResponse(({ request, route, set, responseValue }) => {
      hooks.after(route || "unmatched", request.method, sentStatus(responseValue, set.status), startTimes.get(request) ?? performance.now(), request);
    })
    // An authenticated answer is one caller's own: no cache, shared or the browser's, may
    // keep it (RFC 9111 §5.2.2.5), success or error. This hook runs for both, and for the
    // 401 of a missing credential too.
    .mapResponse({ as: "global" }, ({ request, route, set }) => {
      credentialRoutes ??= credentialRouteKeys(app.routes);
      if (credentialRoutes.has(credentialRouteKey(request.method, route))) markNoStore(set);
    })
    .onError(({ code, error, request, set }) => {
      const answer = errorAnswer(code, error, request);
      // Elysia's own status for an error (200 for an unknown route, 422 for a validation
      // error) is not the one sent: the metrics read this one.
      set.status = answer.status;
      return answer;
    })
    .use(publicRoutes(services))
    .use(adminRoutes(services))
    .use(namespaceRoutes(services))
    .use(keyRoutes(services))
    .use(accountKeyRoutes(services))
    .use(usageRoutes(services))
    .use(billingRoutes(services))
    .use(policyRoutes(services))
    .use(budgetRoutes(services))
    .use(policyPresetRoutes(services))
    .use(routingPresetRoutes(services))
    .use(discoveryRoutes(services))
    .use(statsRoutes(services))
    .use(byokPubkeyRoutes(services))
    .use(byokKeyRoutes(services))
    .use(accountRoutes(services))
    .use(rootRoute())
    .use(consoleRoutes(consoleContext))
    .use(deviceRoutes(consoleContext))
    .use(consentRoutes(consoleContext))
    .use(managementPageRoutes(consoleContext))
    .use(oauthClientRoutes(services))
    .use(oauthGrantRoutes(services))
    .use(oauthRoutes(services, { sessionApprover: consoleSessionApprover(consoleContext) }))
    .use(inferenceRoutes(services));
  return app;
}

export type App = ReturnType<typeof createApp>;
