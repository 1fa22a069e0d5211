import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { bodyValidator } from "../validate-body";
import { authPlugin } from "../../auth/auth-plugin";
import { resolveNamespace } from "../../auth/resolve-namespace";
import { notFound } from "../../errors/api-error";
import { listNamespaceKeys, revokeNamespaceKey } from "../../db/queries/api-keys";
import type { Services } from "../../services";
import { createKey, keyEnvelope } from "./key-service";
import { markNoStore } from "../../auth/tokens";

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

/**
 * API keys under /v1/namespaces/{nsid}/keys, and the flat legacy /v1/keys, which
 * means the caller's own namespace (`me`).
 */
export function keyRoutes(services: Services) {
  const sql = services.db.sql;
  const routes = new Elysia({ name: "keys", normalize: false }).use(authPlugin(services));
  for (const base of ["/v1/namespaces/:nsid/keys", "/v1/keys"] as const) {
    const nsidOf = (params: Record<string, string> | undefined) => params?.nsid ?? "me";
    routes
      .get(
        base,
        async ({ principal, params }) => {
          const namespace = await resolveNamespace(sql, principal, nsidOf(params));
          return { data: (await listNamespaceKeys(sql, namespace.id, principal.accountId)).map(keyEnvelope) };
        },
        { scope: "keys:read", detail: { summary: "List the namespace's API keys (never the secret)", tags: ["keys"], "x-scope": "keys:read" } },
      )
      .post(
        base,
        async ({ principal, params, body, set }) => {
          const input = validateCreate(body);
          const namespace = await resolveNamespace(sql, principal, nsidOf(params));
          const created = await createKey(sql, principal, namespace.id, input, principal);
          markNoStore(set);
          return created;
        },
        {
          scope: "keys:write",
          detail: { summary: "Mint a namespace-bound API key; the token is returned once", tags: ["keys"], "x-scope": "keys:write", ...validateCreate.doc },
        },
      )
      .delete(
        `${base}/:id`,
        async ({ principal, params }) => {
          const namespace = await resolveNamespace(sql, principal, nsidOf(params));
          if (!(await revokeNamespaceKey(sql, params.id, namespace.id, principal.accountId))) throw notFound("key");
          services.credentials.invalidate(params.id);
          return { revoked: true };
        },
        { scope: "keys:write", detail: { summary: "Revoke an API key", tags: ["keys"], "x-scope": "keys:write" } },
      );
  }
  return routes;
}
