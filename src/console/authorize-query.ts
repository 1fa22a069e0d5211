/** Longest authorization request query accepted (it also travels through sign-in as `next`). */
const MAX_QUERY_LENGTH = 3500;

export type ParsedAuthorizeQuery = { ok: true; params: Record<string, string> } | { ok: false; description: string };

/**
 * An authorization request's query string (without `?`) as its parameters. RFC 6749
 * §3.1: a parameter sent more than once is an error (which value would be meant is
 * anyone's guess), so it is refused, not resolved.
 */
export function parseAuthorizeQuery(raw: string): ParsedAuthorizeQuery {
  if (raw.length > MAX_QUERY_LENGTH) return { ok: false, description: "the authorization request is too long" };
  const params: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    if (Object.hasOwn(params, name)) return { ok: false, description: `the parameter ${name} is repeated` };
    params[name] = value;
  }
  return { ok: true, params };
}

/**
 * The Content-Security-Policy `form-action` source that lets the consent form's answer
 * (a redirect) reach the client: its redirect URI's origin, or its private-use scheme.
 */
export function formTargetOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
}
