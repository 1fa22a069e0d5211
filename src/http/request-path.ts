/**
 * The path of a request URL without a full URL parse (this runs per request). Bun hands
 * over a relative URL (`/v1/messages`) when the Host header is empty or unusable.
 */
export function pathOf(url: string): string {
  const start = url.charCodeAt(0) === 47 /* / */ ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

/**
 * Elysia and the routes behind it need an absolute URL whose path starts at the 12th
 * character or later: Elysia looks for the path from there, so behind `Host: api`
 * (`http://api/v1/keys`) it would see `/keys` and answer 404; and `new URL()` throws on
 * what Bun passes for an empty or unusable Host (a relative `/v1/keys`, a port past
 * 65535). Such a request is handed over with a placeholder host; path, query, method,
 * headers, body and signal are unchanged.
 */
export function withRoutableUrl(request: Request): Request {
  const url = request.url;
  const start = url.charCodeAt(0) === 47 /* / */ ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start >= 11 && URL.canParse(url)) return request;
  return new Request(`http://localhost${start === -1 ? "/" : url.slice(start)}`, request);
}
