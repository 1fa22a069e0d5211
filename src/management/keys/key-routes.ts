import { Type } from "@sinclair/typebox";
import { bodyValidator } from "../validate-body";
import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { tenantOfPath } from "../../identity/tenant";
import { createKey, listAccountKeys, listKeys, revokeAccountKey, revokeKey, type ApiKey } from "../../identity/api-key-service";
import { isoOrNull } from "../serialize";
import { Elysia } from "elysia";
import { authPlugin } from "../../auth/auth-plugin";
import { markNoStore } from "../../auth/tokens";
import type { Principal } from "../../auth/principal";

/**
 * What a new key is bounded by: the credential that asked for it, unless that is a
 * person's own sign-in through the first-party CLI (docs/api/credentials.md "Keys people make are the account's", as for
 * the console, which passes no parent). Such a key is the account's: it expires when
 * asked, not with the sign-in, and `switchyard logout` leaves it working. Keys minted
 * by an API key or a third-party client's token stay bounded by it. Whether the token is
 * the CLI's comes from its grant as issued, so no client can claim it.
 */
function keyParent(principal: Principal): Principal | null {
  return principal.kind === "oauth_token" && principal.firstPartySignIn === true ? null : principal;
}

/** A key as the keys routes list it (never the secret). */
function keyEnvelope(key: ApiKey) {
  return {
    id: key.id,
    display_name: key.displayName,
    key_prefix: key.keyPrefix,
    scopes: key.scopes,
    expires_at: isoOrNull(key.expiresAt),
    last_used_at: isoOrNull(key.lastUsedAt),
    revoked_at: isoOrNull(key.revokedAt),
    created_at: key.createdAt.toISOString(),
  };
}

const validateCreate = bodyValidator(
  Type.Object(
    {
      display_name: Type.String({ minLength: 1, maxLength: 200 }),
      scopes: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 64 }),
      expires_at: Type.Optional(Type.String({ maxLength: 64 })),
    },
    { additionalProperties: false },
  ),
);

const routeDoc = routeDocs<"keys:read" | "keys:write">("keys");

/**
 * API keys under /v1/namespaces/{nsid}/keys, and the flat legacy /v1/keys, which
 * means the caller's own namespace (`me`).
 */
export function keyRoutes(services: Services) {
  return namespaceScopedRoutes("keys", services, (routes, base) =>
    routes
      .get(
        `${base}/keys`,
        async ({ principal, params }) => {
          const tenant = await tenantOfPath(services, principal, params);
          return { data: (await listKeys(services, tenant)).map(keyEnvelope) };
        },
        routeDoc("keys:read", "List the namespace's API keys (never the secret)"),
      )
      .post(
        `${base}/keys`,
        async ({ principal, params, body, set }) => {
          const input = validateCreate(body);
          const tenant = await tenantOfPath(services, principal, params);
          const { token, key } = await createKey(services, principal, tenant.namespaceId, input, keyParent(principal));
          markNoStore(set);
          return {
            token,
            id: key.id,
            key_prefix: key.keyPrefix,
            display_name: key.displayName,
            scopes: key.scopes,
            expires_at: isoOrNull(key.expiresAt),
            created_at: key.createdAt.toISOString(),
          };
        },
        routeDoc("keys:write", "Mint a namespace-bound API key; the token is returned once", validateCreate.doc),
      )
      .delete(
        `${base}/keys/:id`,
        async ({ principal, params }) => revokeKey(services, await tenantOfPath(services, principal, params), params.id),
        routeDoc("keys:write", "Revoke an API key"),
      ),
  );
}

/**
 * The account-wide keys (bound to no namespace, like the one POST /admin/accounts
 * returns): GET /v1/account/keys and DELETE /v1/account/keys/{id}, for account-wide
 * callers.
 */
export function accountKeyRoutes(services: Services) {
  return new Elysia({ name: "account-keys", normalize: false })
    .use(authPlugin(services))
    .get(
      "/v1/account/keys",
      async ({ principal }) => ({ data: (await listAccountKeys(services, principal)).map(keyEnvelope) }),
      routeDoc("keys:read", "List the account-wide API keys (the operator-issued one included; never the secret); a namespace-bound credential gets 403"),
    )
    .delete(
      "/v1/account/keys/:id",
      ({ principal, params }) => revokeAccountKey(services, principal, params.id),
      routeDoc("keys:write", "Revoke an account-wide API key, and the keys minted with it; a namespace-bound credential gets 403"),
    );
}
