import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { tenantOfPath } from "../../identity/tenant";
import { listGrants, revokeGrant, type OauthGrant } from "../../identity/oauth-grant-service";
import { isoOrNull } from "../serialize";

/** A grant as `GET …/oauth/tokens` lists it (docs/api/identity.md "Identity: OAuth, clients, accounts"). */
function grantEnvelope(grant: OauthGrant) {
  return {
    id: grant.id,
    client_id: grant.clientId,
    client_name: grant.clientName ?? grant.clientId,
    scopes: grant.scopes,
    created_at: grant.createdAt.toISOString(),
    last_used_at: isoOrNull(grant.lastUsedAt),
    expires_at: grant.expiresAt.toISOString(),
  };
}

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
