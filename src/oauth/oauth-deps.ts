import type { OauthDeps } from "../identity/oauth/oauth-deps";
import type { Services } from "../services";

/** The authorization server's dependencies (src/identity/oauth/) out of the server's services. */
export function oauthDeps(services: Pick<Services, "db" | "config" | "credentials" | "throttle">): OauthDeps {
  return {
    sql: services.db.sql,
    lifetimes: services.config.oauthLifetimes,
    publicUrl: services.config.publicUrl,
    credentials: services.credentials,
    throttle: services.throttle,
  };
}
