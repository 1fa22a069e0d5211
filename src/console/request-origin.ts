/**
 * Whether a state-changing request names an origin other than this server's. Browsers
 * send `Origin` on every POST, but as `null` when the page's referrer policy is
 * `no-referrer` (the console's), so a missing or `null` Origin proves nothing either
 * way and the form's CSRF token decides; any other Origin must be this server's: the
 * public URL's origin, or the origin the request itself was addressed to (its Host).
 */
export function hasForeignOrigin(request: Request, publicUrl: string): boolean {
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return false;
  return !isOwnOrigin(origin, request, publicUrl);
}

/** A present, non-null Origin that is this server's: enough on its own for a cookie-authenticated API call. */
export function hasOwnOrigin(request: Request, publicUrl: string): boolean {
  const origin = request.headers.get("origin");
  return origin !== null && origin !== "null" && isOwnOrigin(origin, request, publicUrl);
}

function isOwnOrigin(origin: string, request: Request, publicUrl: string): boolean {
  if (origin === new URL(publicUrl).origin) return true;
  const host = request.headers.get("host");
  if (!host) return false;
  const scheme = new URL(request.url).protocol;
  return origin === `${scheme}//${host}`;
}
