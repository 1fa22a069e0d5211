import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A random id with a readable prefix: `ns_8f3k…`. 16 chars of base36 ≈ 82 bits. */
export function newId(prefix: string, length = 16): string {
  const bytes = randomBytes(length);
  let out = prefix + "_";
  for (let i = 0; i < length; i++) out += ID_ALPHABET[bytes[i]! % ID_ALPHABET.length];
  return out;
}

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** API key token `brk_<id>.<secret>`; both parts `[A-Za-z0-9_-]` (reference §1.2). */
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

const TOKEN_PATTERN = /^brk_([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

/** Splits a presented API key; undefined when it is not of the brk_ form. */
export function parseApiKeyToken(token: string): { keyId: string } | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { keyId: `k_${match[1]}` } : undefined;
}
