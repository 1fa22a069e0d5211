/**
 * The presented credential, in this precedence:
 * `Authorization` (optional "Bearer " prefix) first, then `x-api-key` (Anthropic
 * clients), then `x-goog-api-key` (the current Google SDK).
 */
export function extractCredential(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  if (authorization) {
    const token = /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, "") : authorization;
    const trimmed = token.trim();
    if (trimmed) return trimmed;
  }
  const apiKey = headers.get("x-api-key")?.trim() || headers.get("x-goog-api-key")?.trim();
  return apiKey || undefined;
}
