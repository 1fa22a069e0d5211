import { badRequest } from "../../errors/api-error";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * A redirect URI a client may register (RFC 6749 §3.1.2, RFC 8252 for native apps):
 * - `https://…` anywhere;
 * - `http://` only on a loopback host (a native app's local listener, any port);
 * - a private-use scheme in reverse-domain form (`com.example.app:/callback`).
 * Always absolute, never with a fragment, never with user info. Authorization requests
 * must then match one exactly, character for character, so no pattern or wildcard
 * can ever send a code somewhere the client did not register.
 */
export function assertRegistrableRedirectUri(value: string, field: string): void {
  if (value.length > 2048) throw badRequest(`${field} is longer than 2048 characters`);
  if (!URL.canParse(value)) throw badRequest(`${field} must be an absolute URI`);
  const url = new URL(value);
  if (url.hash !== "" || value.includes("#")) throw badRequest(`${field} must not contain a fragment`);
  if (url.username !== "" || url.password !== "") throw badRequest(`${field} must not contain user information`);
  if (url.protocol === "https:") return;
  if (url.protocol === "http:") {
    if (LOOPBACK_HOSTS.has(url.hostname)) return;
    throw badRequest(`${field} must use https (plain http is allowed only on a loopback host)`);
  }
  const scheme = url.protocol.slice(0, -1);
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/i.test(scheme)) return;
  throw badRequest(`${field} must be https, loopback http, or a private-use scheme such as com.example.app:/callback`);
}
