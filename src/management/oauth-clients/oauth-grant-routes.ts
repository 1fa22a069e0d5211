import { Elysia } from "elysia";
import { authPlugin } from "../../auth/auth-plugin";
import type { Services } from "../../services";
import { nsidOf, resolveTenant } from "../tenant";
import { grantEnvelope, listGrants, revokeGrant } from "./oauth-grant-service";

const BASES = ["/v1/namespaces/:nsid", "/v1"] as const;

/**
 * The namespace's live OAuth grants (one per approval: a device login, a consent), the
 * `oauth_token` principals policies bind to. Revoking one ends its access and refresh
 * tokens at once on this instance, within CREDENTIAL_CACHE_TTL_MS on the others.
 */
export function oauthGrantRoutes(services: Services) {
  const routes = new Elysia({ name: "oauth-grants", normalize: false }).use(authPlugin(services));
  for (const base of BASES) {
    routes
      .get(
        `${base}/oauth/tokens`,
        async ({ principal, params }) => ({ data: (await listGrants(services, await resolveTenant(services, principal, nsidOf(params)))).map(grantEnvelope) }),
        { scope: "keys:read", detail: { summary: "List the namespace's live OAuth grants", tags: ["oauth clients"], "x-scope": "keys:read" } },
      )
      .delete(
        `${base}/oauth/tokens/:id`,
        async ({ principal, params }) => revokeGrant(services, await resolveTenant(services, principal, nsidOf(params)), params.id),
        { scope: "keys:write", detail: { summary: "Revoke an OAuth grant (its access and refresh tokens)", tags: ["oauth clients"], "x-scope": "keys:write" } },
      );
  }
  return routes;
}
