import { Elysia } from "elysia";
import { authPlugin } from "../../auth/auth-plugin";
import { resolveNamespace } from "../../auth/resolve-namespace";
import { listNamespaceOauthGrants, revokeNamespaceOauthGrant, type OauthGrantListing } from "../../db/queries/oauth-grants";
import { notFound } from "../../errors/api-error";
import type { Services } from "../../services";
import { isoOrNull } from "../serialize";

const BASES = ["/v1/namespaces/:nsid", "/v1"] as const;

function grantEnvelope(row: OauthGrantListing) {
  return {
    id: row.id,
    client_id: row.client_id,
    client_name: row.client_name ?? row.client_id,
    scopes: row.scopes,
    created_at: row.created_at.toISOString(),
    last_used_at: isoOrNull(row.last_used_at),
    expires_at: row.expires_at.toISOString(),
  };
}

/**
 * The namespace's live OAuth grants (one per approval: a device login, a consent), the
 * `oauth_token` principals policies bind to. Revoking one ends its access and refresh
 * tokens at once on this instance, within CREDENTIAL_CACHE_TTL_MS on the others.
 */
export function oauthGrantRoutes(services: Services) {
  const sql = services.db.sql;
  const nsidOf = (params: Record<string, string> | undefined) => params?.nsid ?? "me";
  const routes = new Elysia({ name: "oauth-grants", normalize: false }).use(authPlugin(services));
  for (const base of BASES) {
    routes
      .get(
        `${base}/oauth/tokens`,
        async ({ principal, params }) => {
          const namespace = await resolveNamespace(sql, principal, nsidOf(params));
          return { data: (await listNamespaceOauthGrants(sql, namespace.id, principal.accountId)).map(grantEnvelope) };
        },
        { scope: "keys:read", detail: { summary: "List the namespace's live OAuth grants", tags: ["oauth clients"], "x-scope": "keys:read" } },
      )
      .delete(
        `${base}/oauth/tokens/:id`,
        async ({ principal, params }) => {
          const namespace = await resolveNamespace(sql, principal, nsidOf(params));
          if (!(await revokeNamespaceOauthGrant(sql, params.id, namespace.id, principal.accountId))) throw notFound("OAuth token");
          services.credentials.invalidate(params.id);
          return { revoked: true };
        },
        { scope: "keys:write", detail: { summary: "Revoke an OAuth grant (its access and refresh tokens)", tags: ["oauth clients"], "x-scope": "keys:write" } },
      );
  }
  return routes;
}
