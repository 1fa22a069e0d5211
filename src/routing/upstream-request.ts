import type { ProtocolId } from "../ir";

/** Where and how to call one upstream endpoint (docs/configuration.md "Catalog file": upstream URLs and credential headers). */
export interface UpstreamTarget {
  protocol: ProtocolId;
  baseUrl: string;
  providerModelId: string;
  apiKey: string;
  /**
   * The base URL came from the customer (a BYOK `api_base`), not the catalog: the egress
   * guard checks it before every call, and the upstream's own words never reach the client.
   */
  customerSuppliedBase?: boolean;
}

export function upstreamUrl(target: UpstreamTarget, stream: boolean): string {
  const base = withoutTrailingSlashes(target.baseUrl);
  switch (target.protocol) {
    case "openai-chat":
      return `${base}/chat/completions`;
    case "openai-responses":
      return `${base}/responses`;
    case "anthropic-messages":
      return `${base}/messages`;
    case "google-generate-content":
      return `${base}/models/${encodeURIComponent(target.providerModelId)}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;
  }
}

/**
 * `url` without its trailing slashes, by a loop rather than `/\/+$/`: a customer's BYOK
 * `api_base` (up to 2,048 characters) reaches here on every call, and on one whose path is
 * 2,000 slashes and a letter that pattern backtracks quadratically (~1.6 ms a call, measured).
 */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url.charCodeAt(end - 1) === 0x2f) end--;
  return end === url.length ? url : url.slice(0, end);
}

/** Each protocol's own credential header; Anthropic also needs its API version. */
export function upstreamHeaders(target: UpstreamTarget, passthrough: Headers, requestId: string): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "x-request-id": requestId,
  };
  switch (target.protocol) {
    case "openai-chat":
    case "openai-responses":
      headers.authorization = `Bearer ${target.apiKey}`;
      break;
    case "anthropic-messages": {
      headers["x-api-key"] = target.apiKey;
      headers["anthropic-version"] = "2023-06-01";
      const beta = passthrough.get("anthropic-beta");
      if (beta) headers["anthropic-beta"] = beta;
      break;
    }
    case "google-generate-content":
      headers["x-goog-api-key"] = target.apiKey;
      break;
  }
  // W3C trace context crosses the gateway untouched.
  for (const name of ["traceparent", "tracestate"]) {
    const value = passthrough.get(name);
    if (value) headers[name] = value;
  }
  return headers;
}
