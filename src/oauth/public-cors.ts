/**
 * CORS for the authorization server's public machine endpoints (discovery, device
 * authorization, token, revocation), so a single-page app running the authorization
 * code flow with PKCE can reach them from the browser. Any origin may: these endpoints
 * take no cookie or other ambient credential (a confidential client authenticates with
 * its secret in the body or the Authorization header it sets itself), and the wildcard
 * never lets a browser send cookies. The decision API and the console pages, which a
 * session cookie authenticates, get none of this.
 */
const CORS_HEADERS: Readonly<Record<string, string>> = {
  "access-control-allow-origin": "*",
  // A token response's Cache-Control and a refusal's WWW-Authenticate, readable by the app.
  "access-control-expose-headers": "cache-control, www-authenticate, retry-after",
};

/** The answer with the CORS headers added. */
export function withPublicCors(response: Response): Response {
  for (const [name, value] of Object.entries(CORS_HEADERS)) response.headers.set(name, value);
  return response;
}

/** The answer to a preflight (`OPTIONS`) for one of these endpoints. */
export function publicCorsPreflight(methods: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      "access-control-allow-methods": methods,
      // Content-Type for form and JSON bodies, Authorization for HTTP Basic client authentication.
      "access-control-allow-headers": "authorization, content-type",
      "access-control-max-age": "600",
    },
  });
}
