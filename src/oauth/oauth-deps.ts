import type { Sql } from "../db/connect-database";
import type { OauthLifetimes } from "../config";
import type { CredentialResolver } from "../auth/credential-resolver";
import type { AuthThrottle } from "../auth/auth-throttle";
import type { Services } from "../services";

/** What the authorization server's functions need; `oauthDeps(services)` builds it. */
export interface OauthDeps {
  sql: Sql;
  lifetimes: OauthLifetimes;
  /** The issuer and the base of every absolute URL the server hands out. */
  publicUrl: string;
  /** Dropped from at once when a grant is revoked or refreshed on this instance. */
  credentials: CredentialResolver;
  /** Counts unknown user codes per client address. */
  throttle: AuthThrottle;
}

export function oauthDeps(services: Pick<Services, "db" | "config" | "credentials" | "throttle">): OauthDeps {
  return {
    sql: services.db.sql,
    lifetimes: services.config.oauthLifetimes,
    publicUrl: services.config.publicUrl,
    credentials: services.credentials,
    throttle: services.throttle,
  };
}
