/**
 * The optional scheme before an `Authorization` credential, or the scheme alone (the
 * runtime trims a header's trailing spaces, so `Bearer ` with an empty key arrives as
 * `Bearer`): then there is no credential there, and the other headers are read. Made once:
 * a regex literal in the function made two RegExp objects per request.
 */
const BEARER_PREFIX = /^bearer(?:\s+|$)/i;

/**
 * The presented credential, in this precedence:
 * `Authorization` (optional "Bearer " prefix) first, then `x-api-key` (Anthropic
 * clients), then `x-goog-api-key` (the current Google SDK).
 */
export function extractCredential(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  if (authorization) {
    const token = authorization.replace(BEARER_PREFIX, "");
    const trimmed = token.trim();
    if (trimmed) return trimmed;
  }
  const apiKey = headers.get("x-api-key")?.trim() || headers.get("x-goog-api-key")?.trim();
  return apiKey || undefined;
}
