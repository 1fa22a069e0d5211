import { Elysia } from "elysia";
import { irError } from "../ir";
import type { Services } from "../services";
import { runInference, type InferenceDeps } from "../pipeline/run-inference";
import type { InferenceInput } from "../pipeline/request-context";
import { log } from "../observability/log";
import { errorInProtocol } from "../pipeline/inference-error";
import { withServerTiming } from "../pipeline/server-timing";
import { requestIdFrom } from "../pipeline/request-id";
import { countTokens } from "./count-tokens";
import { INFERENCE_PATHS, type InferencePath } from "./inference-paths";
import { pathOf } from "../http/request-path";
import type { RequestHooks } from "../http/request-hooks";

const SCOPE_DOC = { "x-scope": "inference:invoke" };
const COUNT_TOKENS_PATH = "/v1/messages/count_tokens";

/** Whether an Elysia route pattern (`context.route`) is one of the inference routes, which read their own bodies. */
export function isInferenceRoute(route: string): boolean {
  return INFERENCE_ENDPOINTS.some((endpoint) => endpoint.path === route);
}

/** Whatever goes wrong, an inference client gets an error in its own protocol, never the management shape. */
async function handleInference(deps: InferenceDeps, input: InferenceInput): Promise<Response> {
  try {
    return await runInference(deps, input);
  } catch (error) {
    const requestId = requestIdFrom(input.request.headers);
    log.error("inference failed unexpectedly", { requestId, error: error instanceof Error ? error.message : String(error) });
    // Rare enough to time from here: the pipeline's own start is not at hand.
    return withServerTiming(deps.overhead, input.protocol, performance.now(), undefined, errorInProtocol(input.protocol, irError("internal", "internal error"), requestId));
  }
}

/**
 * Google puts `{model}:{action}` in the path. Model ids contain slashes, so the whole
 * tail is the model, split on the last colon. Under /v1beta/* (no `models/`) the tail is
 * the model too: Google's own clients send a model id that contains a slash as a path of
 * its own (the `tunedModels/…` form), which is what the Vercel AI SDK's Google provider
 * does with `<provider>/<model>`.
 */
function generateContent(deps: InferenceDeps, request: Request, encodedTail: string): Promise<Response> | Response {
  const tail = decodePath(encodedTail);
  const colon = tail === undefined ? -1 : tail.lastIndexOf(":");
  const action = colon === -1 ? "" : tail!.slice(colon + 1);
  if (tail === undefined || colon <= 0 || (action !== "generateContent" && action !== "streamGenerateContent")) {
    const error = irError("invalid_request", "google path must be 'models/{model}:generateContent' or ':streamGenerateContent'");
    const response = errorInProtocol("google-generate-content", error, requestIdFrom(request.headers));
    return withServerTiming(deps.overhead, "google-generate-content", performance.now(), undefined, response);
  }
  return handleInference(deps, {
    protocol: "google-generate-content",
    request,
    injected: { model: tail.slice(0, colon), stream: action === "streamGenerateContent" },
  });
}

/** A percent-encoded path segment, decoded once; undefined when the encoding is malformed (`%E0%A4`). */
function decodePath(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

interface InferenceEndpoint extends InferencePath {
  /** `tail` is the still-encoded part of the path matched by `*` ("" for literal paths). */
  serve(deps: InferenceDeps, request: Request, tail: string): Promise<Response> | Response;
}

/** What each inference path runs. */
function serverFor(entry: InferencePath): InferenceEndpoint["serve"] {
  if (entry.path === COUNT_TOKENS_PATH) return (deps, request) => countTokens(deps, request);
  if (entry.protocol === "google-generate-content") return generateContent;
  const protocol = entry.protocol;
  return (deps, request) => handleInference(deps, { protocol, request });
}

/** Every inference route (POST), in one table for both routers (see `inferenceServeRoutes`). */
const INFERENCE_ENDPOINTS: readonly InferenceEndpoint[] = INFERENCE_PATHS.map((entry) => ({ ...entry, serve: serverFor(entry) }));

/**
 * The inference routes in Elysia, with their OpenAPI entries. Bodies are read raw
 * (`parse: "none"`): the codecs decode them. In the running server Bun's own router
 * reaches these paths first (`inferenceServeRoutes`); Elysia answers every other method
 * on them and documents them.
 */
export function inferenceRoutes(services: Services) {
  const deps = inferenceDeps(services);
  let app = new Elysia({ name: "inference", normalize: false });
  for (const endpoint of INFERENCE_ENDPOINTS) {
    // Static paths come without params: Elysia leaves `params` undefined for them.
    app = app.post(endpoint.path, ({ request, params }) => endpoint.serve(deps, request, (params as Record<string, string> | undefined)?.["*"] ?? ""), {
      parse: "none",
      detail: { summary: endpoint.summary, tags: ["inference"], ...SCOPE_DOC },
    });
  }
  return app;
}

/**
 * The inference routes for `Bun.serve({ routes })`. Bun matches these paths natively, so
 * the hottest requests skip Elysia's per-request context and hooks, which the benchmark
 * measured at ~15 µs of CPU per request (a tenth of the gateway's own cost). The hooks
 * keep the body limit and the HTTP metrics identical to the Elysia routes.
 *
 * Bun matches the path as sent but hands over `request.url` with dot segments resolved
 * (`/v1beta/models/../../v1/keys` arrives as `/v1/keys`). A wildcard match whose
 * resolved path left the prefix is passed to `fallback` (Elysia), which routes the
 * resolved path like every other request: every route sees the normalized path.
 */
export function inferenceServeRoutes(
  services: Services,
  hooks: RequestHooks,
  fallback: (request: Request, server: Bun.Server<undefined>) => Promise<Response> | Response,
): Record<string, { POST: (request: Request, server: Bun.Server<undefined>) => Promise<Response> }> {
  const deps = inferenceDeps(services);
  const routes: Record<string, { POST: (request: Request, server: Bun.Server<undefined>) => Promise<Response> }> = {};
  for (const endpoint of INFERENCE_ENDPOINTS) {
    const prefixLength = endpoint.path.endsWith("/*") ? endpoint.path.length - 1 : -1;
    const prefix = prefixLength === -1 ? endpoint.path : endpoint.path.slice(0, prefixLength);
    routes[endpoint.path] = {
      POST: async (request, server) => {
        const path = pathOf(request.url);
        if (prefixLength === -1 ? path !== endpoint.path : !path.startsWith(prefix)) return fallback(request, server);
        const startedAt = performance.now();
        let response = hooks.before(request, path);
        // A body refused by its Content-Length before the pipeline ran (count_tokens has no upstream and no Server-Timing).
        if (response !== undefined && endpoint.path !== COUNT_TOKENS_PATH) {
          withServerTiming(deps.overhead, endpoint.protocol, startedAt, undefined, response);
        }
        try {
          response ??= await endpoint.serve(deps, request, prefixLength === -1 ? "" : path.slice(prefixLength));
          return response;
        } finally {
          hooks.after(endpoint.path, "POST", response?.status ?? 500, startedAt, request);
        }
      },
    };
  }
  return routes;
}

/** The pipeline's stages wired to the server's services: each stage gets only what it uses. */
export function inferenceDeps(services: Services): InferenceDeps {
  const { config, translator, catalog, endpointStats, metrics, inFlight } = services;
  // Bodies and answers the pool translates are read as their chunks, which it takes as they are.
  const bytesAbove = translator.mode === "inline" ? Number.POSITIVE_INFINITY : config.translationInlineMaxBytes;
  return {
    auth: { credentials: services.credentials },
    decode: { translator, maxBodyBytes: config.maxInferenceBodyBytes, bytesAbove },
    resolve: { presets: services.routingPresets, namespaces: services.me },
    plan: { catalog, endpointStats },
    funding: services.funding,
    admission: { chain: services.admission, namespaces: services.me, policies: services.policies },
    attempts: {
      translator,
      timeouts: config.upstreamTimeouts,
      maxUpstreamBodyBytes: config.maxUpstreamBodyBytes,
      answerBytesAbove: bytesAbove,
      answerBytes: services.answerBytes,
      connectCheck: services.connectCheck,
      graceOver: inFlight.graceOver,
      byokKeys: services.byokKeys,
      egress: services.egress,
      endpointStats,
      metrics,
      inFlight,
      stallTimeoutMs: config.streamStallTimeoutMs,
    },
    // METERING=off (benchmarks): nothing is recorded or charged (docs/architecture.md "Metering").
    records: config.meteringEnabled ? { sink: services.meteringSink, writeBuffer: services.writeBuffer, pending: services.pendingSettlements, refusals: services.refusals } : undefined,
    overhead: metrics.gatewayOverhead,
    tracing: services.tracing,
  };
}
