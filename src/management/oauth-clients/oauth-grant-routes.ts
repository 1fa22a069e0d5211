import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { tenantOfPath } from "../tenant";
import { grantEnvelope, listGrants, revokeGrant } from "./oauth-grant-service";

const routeDoc = routeDocs<"keys:read" | "keys:write">("oauth clients");

/**
 * The namespace's live OAuth grants (one per approval: a device login, a consent), the
 * `oauth_token` principals policies bind to. Revoking one ends its access and refresh
 * tokens at once on this instance, within CREDENTIAL_CACHE_TTL_MS on the others.
 */
export function oauthGrantRoutes(services: Services) {
  return namespaceScopedRoutes("oauth-grants", services, (routes, base) =>
    routes
      .get(
        `${base}/oauth/tokens`,
        async ({ principal, params }) => ({ data: (await listGrants(services, await tenantOfPath(services, principal, params))).map(grantEnvelope) }),
        routeDoc("keys:read", "List the namespace's live OAuth grants"),
      )
      .delete(
        `${base}/oauth/tokens/:id`,
        async ({ principal, params }) => revokeGrant(services, await tenantOfPath(services, principal, params), params.id),
        routeDoc("keys:write", "Revoke an OAuth grant (its access and refresh tokens)"),
      ),
  );
}
