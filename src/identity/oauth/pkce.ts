import { constantTimeEqual } from "../../auth/tokens";

/** RFC 7636 §4.1/§4.2: 43–128 unreserved characters, for verifiers and S256 challenges alike. */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

export function isPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

/** Does the verifier hash to the challenge (S256: base64url of its SHA-256)? Compared in constant time. */
export function verifyS256(verifier: string, challenge: string): boolean {
  if (!isPkceValue(verifier)) return false;
  const computed = Buffer.from(new Bun.CryptoHasher("sha256").update(verifier).digest()).toString("base64url");
  return constantTimeEqual(Buffer.from(computed), Buffer.from(challenge));
}
