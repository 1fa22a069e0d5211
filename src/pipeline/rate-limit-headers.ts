import type { ProtocolId } from "../ir";
import type { RateLimitHeadroom, RateLimitStatus } from "../admission/admission-check";

/**
 * A duration the way OpenAI's `x-ratelimit-reset-*` headers write it (Go's duration
 * format, which its SDKs and clients parse): `0s`, `45s`, `6m0s`, `1h2m5s`.
 */
export function openAiDuration(totalSecs: number): string {
  const secs = Math.max(0, Math.ceil(totalSecs));
  const hours = Math.floor(secs / 3600);
  const minutes = Math.floor((secs % 3600) / 60);
  const seconds = secs % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** RFC 3339 to the second, as Anthropic's `anthropic-ratelimit-*-reset` headers carry it. */
function resetAt(nowMs: number, resetSecs: number): string {
  return new Date(Math.floor(nowMs / 1000) * 1000 + Math.ceil(resetSecs) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function setOpenAi(headers: Headers, unit: "requests" | "tokens", headroom: RateLimitHeadroom): void {
  headers.set(`x-ratelimit-limit-${unit}`, String(headroom.limit));
  headers.set(`x-ratelimit-remaining-${unit}`, String(headroom.remaining));
  headers.set(`x-ratelimit-reset-${unit}`, openAiDuration(headroom.resetSecs));
}

function setAnthropic(headers: Headers, unit: "requests" | "tokens", headroom: RateLimitHeadroom, nowMs: number): void {
  headers.set(`anthropic-ratelimit-${unit}-limit`, String(headroom.limit));
  headers.set(`anthropic-ratelimit-${unit}-remaining`, String(headroom.remaining));
  headers.set(`anthropic-ratelimit-${unit}-reset`, resetAt(nowMs, headroom.resetSecs));
}

/**
 * The rate-limit headers of an inference response on a credential a rate limit binds
 * (docs/api/policies.md "Rate-limit headers"): OpenAI's `x-ratelimit-*` on every protocol (the names
 * most clients read), and on Messages answers Anthropic's `anthropic-ratelimit-*` as
 * well. The figures are those admission decided by; `remaining` is approximate for a
 * request admitted from a lease (src/admission/rate-limit-status.ts).
 */
export function withRateLimitHeaders(response: Response, status: RateLimitStatus | undefined, protocol: ProtocolId): Response {
  if (status === undefined) return response;
  const { headers } = response;
  const nowMs = Date.now();
  if (status.requests) {
    setOpenAi(headers, "requests", status.requests);
    if (protocol === "anthropic-messages") setAnthropic(headers, "requests", status.requests, nowMs);
  }
  if (status.tokens) {
    setOpenAi(headers, "tokens", status.tokens);
    if (protocol === "anthropic-messages") setAnthropic(headers, "tokens", status.tokens, nowMs);
  }
  return response;
}
