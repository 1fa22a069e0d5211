import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { endSession, extendSession, findSession, setSessionFlash, startSession, takeSessionFlash, type SessionServiceDeps } from "../management/sessions/session-service";
import { constantTimeEqual, sha256 } from "../auth/tokens";
import { readCookie, setCookie } from "./cookies";

export const SESSION_COOKIE = "switchyard_session";
/** A session lives 12 hours from its last use, and never past its maximum age (Config). */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;
/** A session's expiry is moved forward at most this often (a write per page view is not needed). */
const EXTEND_AFTER_MS = 5 * 60 * 1000;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A signed-in console user, as a page or form handler sees it. */
export interface ConsoleSession {
  accountId: string;
  email: string;
  displayName: string | null;
  /** Set-Cookie values the response should carry (the refreshed cookie of a sliding session). */
  cookies: string[];
  /** The CSRF token forms with this purpose carry: HMAC-SHA256 of the purpose under the session's own secret. */
  csrfToken(purpose: string): string;
  /** Whether a presented CSRF token is the one for this purpose. */
  checkCsrf(purpose: string, presented: unknown): boolean;
  /** The session's key in the database (SHA-256 of the cookie's token). */
  tokenHash: Buffer;
  /**
   * Seals the session's one-time message: derived from the cookie's token, which the
   * database does not hold (only its hash), so a stored message opens only for a request
   * presenting that cookie.
   */
  flashKey: Buffer;
}

/** AES-256-GCM: a 12-byte nonce, then the ciphertext, then the 16-byte tag. */
function sealFlash(key: Buffer, plain: string): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

function openFlash(key: Buffer, sealed: Uint8Array): string | undefined {
  const box = Buffer.from(sealed);
  if (box.length < 28) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, box.subarray(0, 12));
    decipher.setAuthTag(box.subarray(box.length - 16));
    return Buffer.concat([decipher.update(box.subarray(12, box.length - 16)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}

/**
 * Console sign-in sessions. The cookie holds 32 random bytes; the database holds their
 * SHA-256 (a leaked table cannot be replayed), the account and a per-session CSRF secret.
 * Sessions authenticate the console's pages and its decision API only, never the JSON API.
 * A session in use slides its 12-hour expiry forward, up to `maxAgeMs` after it was
 * created; then it ends whatever its use, and the person signs in again.
 */
export class ConsoleSessions {
  constructor(
    private readonly deps: SessionServiceDeps,
    /** PUBLIC_URL is https: the cookie is Secure. */
    private readonly secureCookies: boolean,
    /** The absolute cap on a session's life from its sign-in (Config.consoleSessionMaxAgeMs). */
    private readonly maxAgeMs: number,
  ) {}

  /**
   * A new session for the account signed in with the password whose hash is
   * `passwordHash`; returns the Set-Cookie value carrying its token, or undefined when the
   * password was changed since it was verified.
   */
  async create(accountId: string, passwordHash: string): Promise<string | undefined> {
    const token = randomBytes(32).toString("base64url");
    const lifetimeMs = Math.min(SESSION_LIFETIME_MS, this.maxAgeMs);
    const expiresAt = new Date(Date.now() + lifetimeMs);
    if (!(await startSession(this.deps, { tokenHash: sha256(token), accountId, csrfSecret: randomBytes(32), expiresAt, passwordHash }))) return undefined;
    return this.cookie(token, Math.floor(lifetimeMs / 1000));
  }

  /** The request's live session, or undefined (no cookie, unknown, expired, deleted account). */
  async resolve(request: Request): Promise<ConsoleSession | undefined> {
    const token = readCookie(request, SESSION_COOKIE);
    if (token === undefined || !TOKEN_PATTERN.test(token)) return undefined;
    const tokenHash = sha256(token);
    const stored = await findSession(this.deps, tokenHash);
    if (!stored) return undefined;
    const cookies: string[] = [];
    const now = Date.now();
    const endOfLife = stored.createdAt.getTime() + this.maxAgeMs;
    if (now >= endOfLife) {
      // Past its cap (however its expiry slid, or if the cap was lowered since).
      await endSession(this.deps, tokenHash);
      return undefined;
    }
    if (now - stored.lastSeenAt.getTime() > EXTEND_AFTER_MS) {
      const expiresAt = Math.min(now + SESSION_LIFETIME_MS, endOfLife);
      await extendSession(this.deps, tokenHash, new Date(expiresAt));
      cookies.push(this.cookie(token, Math.max(1, Math.floor((expiresAt - now) / 1000))));
    }
    const secret = Buffer.from(stored.csrfSecret);
    const csrfToken = (purpose: string) => createHmac("sha256", secret).update(`console-csrf:${purpose}`).digest("base64url");
    return {
      accountId: stored.accountId,
      email: stored.email,
      displayName: stored.displayName,
      cookies,
      tokenHash,
      flashKey: createHmac("sha256", token).update("console-flash").digest(),
      csrfToken,
      checkCsrf: (purpose, presented) =>
        typeof presented === "string" && constantTimeEqual(Buffer.from(presented), Buffer.from(csrfToken(purpose))),
    };
  }

  /**
   * Keeps `message` for the next page this session loads that asks for it (post/redirect/get:
   * a form that made a secret redirects, and the page after shows the secret once).
   */
  async putFlash(session: ConsoleSession, message: unknown): Promise<void> {
    await setSessionFlash(this.deps, session.tokenHash, sealFlash(session.flashKey, JSON.stringify(message)));
  }

  /** The session's one-time message, removed as it is read: a reload finds nothing. */
  async takeFlash(session: ConsoleSession): Promise<unknown> {
    const sealed = await takeSessionFlash(this.deps, session.tokenHash);
    const plain = sealed && openFlash(session.flashKey, sealed);
    return plain === undefined ? undefined : JSON.parse(plain);
  }

  /** Ends the session; returns the Set-Cookie value that deletes the cookie. */
  async destroy(session: ConsoleSession): Promise<string> {
    await endSession(this.deps, session.tokenHash);
    return this.cookie("", 0);
  }

  private cookie(token: string, maxAgeSecs: number): string {
    return setCookie(SESSION_COOKIE, token, { maxAgeSecs, secure: this.secureCookies });
  }
}
