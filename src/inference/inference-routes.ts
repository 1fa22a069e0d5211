import { Elysia } from "elysia";
import { irError, type ProtocolId } from "../ir";
import type { Services } from "../services";
import { handleInference as handle, type InferenceInput } from "./handle-inference";
import { log } from "../observability/log";
import { errorInProtocol } from "./inference-error";
import { requestIdFrom } from "./request-id";
import { countTokens } from "./count-tokens";

const SCOPE_DOC = { "x-scope": "inference:invoke" };

/** The inference protocol a path belongs to, if any (the paths registered below): its errors are rendered in that protocol. */
export function inferenceProtocolOf(path: string): ProtocolId | undefined {
  if (path === "/v1/chat/completions") return "openai-chat";
  if (path === "/v1/responses") return "openai-responses";
  if (path === "/v1/messages" || path === "/v1/messages/count_tokens") return "anthropic-messages";
  if (path.startsWith("/v1beta/") || (path.startsWith("/v1/models/") && path.includes(":"))) return "google-generate-content";
  return undefined;
}

/** Whatever goes wrong, an inference client gets an error in its own protocol, never the management shape. */
async function handleInference(services: Services, input: InferenceInput): Promise<Response> {
  try {
    return await handle(services, input);
  } catch (error) {
    const requestId = requestIdFrom(input.request.headers);
    log.error("inference failed unexpectedly", { requestId, error: error instanceof Error ? error.message : String(error) });
    return errorInProtocol(input.protocol, irError("internal", "internal error"), requestId);
  }
}

/**
 * The four inference protocols. Bodies are read raw (`parse: "none"`): the codecs
 * decode them, in the worker pool or inline.
 */
export function inferenceRoutes(services: Services) {
  const generateContent = ({ request, params }: { request: Request; params: Record<string, string> }) => {
    // Model ids contain slashes, so `{model}:{action}` is the whole tail, split on the last colon.
    // Under /v1beta/* (no `models/`) the tail is the model too: Google's own clients send a
    // model id that contains a slash as a path of its own (the `tunedModels/…` form), which
    // is what the Vercel AI SDK's Google provider does with `<provider>/<model>`.
    const tail = decodeURIComponent(params["*"] ?? "");
    const colon = tail.lastIndexOf(":");
    const action = colon === -1 ? "" : tail.slice(colon + 1);
    if (colon <= 0 || (action !== "generateContent" && action !== "streamGenerateContent")) {
      const error = irError("invalid_request", "google path must be 'models/{model}:generateContent' or ':streamGenerateContent'");
      return errorInProtocol("google-generate-content", error, requestIdFrom(request.headers));
    }
    return handleInference(services, {
      protocol: "google-generate-content",
      request,
      injected: { model: tail.slice(0, colon), stream: action === "streamGenerateContent" },
    });
  };
  const googleDetail = { summary: "Google generateContent / streamGenerateContent; {model} is `<provider>/<model>`", tags: ["inference"], ...SCOPE_DOC };

  return new Elysia({ name: "inference", normalize: false })
    .post("/v1/chat/completions", ({ request }) => handleInference(services, { protocol: "openai-chat", request }), {
      parse: "none",
      detail: { summary: "OpenAI chat completions (sync and SSE)", tags: ["inference"], ...SCOPE_DOC },
    })
    .post("/v1/responses", ({ request }) => handleInference(services, { protocol: "openai-responses", request }), {
      parse: "none",
      detail: { summary: "OpenAI Responses (sync and SSE)", tags: ["inference"], ...SCOPE_DOC },
    })
    .post("/v1/messages", ({ request }) => handleInference(services, { protocol: "anthropic-messages", request }), {
      parse: "none",
      detail: { summary: "Anthropic Messages (sync and SSE)", tags: ["inference"], ...SCOPE_DOC },
    })
    .post("/v1/messages/count_tokens", ({ request }) => countTokens(services, request), {
      parse: "none",
      detail: { summary: "Anthropic token count (an estimate: 4 characters per token), as Claude Code calls it", tags: ["inference"], ...SCOPE_DOC },
    })
    .post("/v1beta/models/*", generateContent, { parse: "none", detail: googleDetail })
    .post("/v1/models/*", generateContent, { parse: "none", detail: googleDetail })
    .post("/v1beta/*", generateContent, {
      parse: "none",
      detail: { summary: "Google generateContent with the model as the path (`/v1beta/<provider>/<model>:generateContent`)", tags: ["inference"], ...SCOPE_DOC },
    });
}
