import type { ProtocolId } from "../ir";

/** One inference route (POST): its path pattern, the protocol its clients speak, and its OpenAPI summary. */
export interface InferencePath {
  /** A route pattern both routers understand: a literal path, or a prefix ending in `/*`. */
  path: string;
  protocol: ProtocolId;
  summary: string;
  /**
   * The wildcard tail is inference only with a `:{action}` in it (Google's
   * `{model}:generateContent`); without one the path belongs to another route (model info).
   */
  actionInTail?: true;
}

/**
 * Every inference path, listed once: the routes (inference-routes.ts) are built from it,
 * and the request hooks use it to answer a too-large body in the path's own protocol.
 */
export const INFERENCE_PATHS: readonly InferencePath[] = [
  { path: "/v1/chat/completions", protocol: "openai-chat", summary: "OpenAI chat completions (sync and SSE)" },
  { path: "/v1/responses", protocol: "openai-responses", summary: "OpenAI Responses (sync and SSE)" },
  { path: "/v1/messages", protocol: "anthropic-messages", summary: "Anthropic Messages (sync and SSE)" },
  {
    path: "/v1/messages/count_tokens",
    protocol: "anthropic-messages",
    summary: "Anthropic token count (an estimate: 4 characters per token), as Claude Code calls it",
  },
  {
    path: "/v1beta/models/*",
    protocol: "google-generate-content",
    summary: "Google generateContent / streamGenerateContent; {model} is `<provider>/<model>`",
  },
  {
    path: "/v1/models/*",
    protocol: "google-generate-content",
    summary: "Google generateContent / streamGenerateContent; {model} is `<provider>/<model>`",
    actionInTail: true,
  },
  {
    path: "/v1beta/*",
    protocol: "google-generate-content",
    summary: "Google generateContent with the model as the path (`/v1beta/<provider>/<model>:generateContent`)",
  },
];

/** The inference protocol a path belongs to, if any: its errors are rendered in that protocol. */
export function inferenceProtocolOf(path: string): ProtocolId | undefined {
  for (const entry of INFERENCE_PATHS) {
    if (!entry.path.endsWith("/*")) {
      if (path === entry.path) return entry.protocol;
      continue;
    }
    const prefix = entry.path.slice(0, -1);
    if (path.startsWith(prefix) && (!entry.actionInTail || path.includes(":", prefix.length))) return entry.protocol;
  }
  return undefined;
}
