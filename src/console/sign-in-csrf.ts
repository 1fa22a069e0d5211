import { createHmac, randomBytes } from "node:crypto";
import { signingKey, type SessionServiceDeps } from "../management/sessions/session-service";
import { constantTimeEqual } from "../auth/tokens";
import { readCookie, setCookie } from "./cookies";

export const SIGN_IN_COOKIE = "switchyard_sign_in";
const NONCE_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const COOKIE_LIFETIME_SECS = 60 * 60;

/**
 * The sign-in form's CSRF protection, before any session exists: a signed double-submit.
 * Showing the form sets a cookie with a random nonce, and the form carries
 * HMAC-SHA256(server key, nonce); a sign-in is accepted only when the two match. A
 * cross-site page can make the browser send the cookie but cannot read it, so it cannot
 * compute the field. The key is one per deployment, kept in the database so every
 * instance accepts the forms of the others (console_signing_keys, migration 0021).
 */
export class SignInCsrf {
  private key: Promise<Uint8Array> | undefined;

  constructor(
    private readonly deps: SessionServiceDeps,
    private readonly secureCookies: boolean,
  ) {}

  /** The token for the form and, when the browser has no nonce yet, the cookie that sets one. */
  async issue(request: Request): Promise<{ token: string; cookies: string[] }> {
    const existing = readCookie(request, SIGN_IN_COOKIE);
    if (existing !== undefined && NONCE_PATTERN.test(existing)) return { token: await this.sign(existing), cookies: [] };
    const nonce = randomBytes(16).toString("base64url");
    return {
      token: await this.sign(nonce),
      cookies: [setCookie(SIGN_IN_COOKIE, nonce, { maxAgeSecs: COOKIE_LIFETIME_SECS, secure: this.secureCookies })],
    };
  }

  async check(request: Request, presented: unknown): Promise<boolean> {
    const nonce = readCookie(request, SIGN_IN_COOKIE);
    if (nonce === undefined || !NONCE_PATTERN.test(nonce) || typeof presented !== "string") return false;
    return constantTimeEqual(Buffer.from(presented), Buffer.from(await this.sign(nonce)));
  }

  private async sign(nonce: string): Promise<string> {
    const key = await (this.key ??= signingKey(this.deps, "sign-in-csrf", randomBytes(32)).catch((error: unknown) => {
      this.key = undefined;
      throw error;
    }));
    return createHmac("sha256", key).update(`sign-in:${nonce}`).digest("base64url");
  }
}
