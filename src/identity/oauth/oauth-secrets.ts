import { randomBytes } from "node:crypto";
import { OAUTH_ACCESS_TOKEN_PREFIX, sha256 } from "../../auth/tokens";

/** A secret to hand out once and its SHA-256, which is all that is stored. */
export interface MintedSecret {
  value: string;
  hash: Buffer;
}

/** Refresh tokens carry their own prefix, so a leaked one is recognisable in a scanner or a log. */
export const REFRESH_TOKEN_PREFIX = "brr_";

/** 32 random bytes (256 bits) as base64url behind `prefix`. */
function mint(prefix: string): MintedSecret {
  const value = prefix + randomBytes(32).toString("base64url");
  return { value, hash: sha256(value) };
}

export const mintAccessToken = (): MintedSecret => mint(OAUTH_ACCESS_TOKEN_PREFIX);
export const mintRefreshToken = (): MintedSecret => mint(REFRESH_TOKEN_PREFIX);
export const mintDeviceCode = (): MintedSecret => mint("");
export const mintAuthorizationCode = (): MintedSecret => mint("");
