import { randomBytes, timingSafeEqual } from "node:crypto";
import { newId } from "../ids";

export function sha256(text: string): Buffer {
  return Buffer.from(Bun.SHA256.hash(text).buffer);
}

/** The SHA-256 of a token as base64: the credential cache key (Bun's one-shot hash, ~6× cheaper than a Hash object). */
export function sha256Base64(text: string): string {
  return Bun.SHA256.hash(text, "base64");
}

export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** API key token `brk_<id>.<secret>`; both parts `[A-Za-z0-9_-]`. */
export interface MintedToken {
  keyId: string;
  token: string;
  tokenHash: Buffer;
  keyPrefix: string;
}

export function mintApiKeyToken(): MintedToken {
  const keyId = newId("k").slice(2); // the id part of brk_<id>; stored as "k_<id>"
  const secret = randomBytes(32).toString("base64url");
  const token = `brk_${keyId}.${secret}`;
  return { keyId: `k_${keyId}`, token, tokenHash: sha256(token), keyPrefix: token.slice(0, 12) };
}

/** An OAuth access token is `bra_` and an opaque random part; its grant is found by the token's SHA-256. */
export const OAUTH_ACCESS_TOKEN_PREFIX = "bra_";

const TOKEN_PATTERN = /^brk_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

/** Splits a presented API key; undefined when it is not of the brk_ form. */
export function parseApiKeyToken(token: string): { keyId: string } | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { keyId: `k_${match[1]}` } : undefined;
}

/**
 * Headers for a response that carries a secret once (a minted key, a client secret): no
 * cache, shared or private, may keep it (RFC 9111 §5.2.2.5; `Pragma` for HTTP/1.0 caches).
 */
export function markNoStore(set: { headers: Record<string, string | number> }): void {
  set.headers["cache-control"] = "no-store";
  set.headers.pragma = "no-cache";
}
