import type { Sql } from "../../db/connect-database";
import type { OauthLifetimes } from "../../config";
import type { CredentialResolver } from "../credential-resolver";
import type { AuthThrottle } from "../auth-throttle";

/** What the authorization server's functions need; `oauthDeps(services)` (src/oauth/oauth-deps.ts) builds it. */
export interface OauthDeps {
  sql: Sql;
  lifetimes: OauthLifetimes;
  /** The issuer and the base of every absolute URL the server hands out. */
  publicUrl: string;
  /** Dropped from at once, through credential-revocation.ts, when a grant is revoked or refreshed on this instance. */
  credentials: CredentialResolver;
  /** Counts unknown user codes per client address. */
  throttle: AuthThrottle;
}
