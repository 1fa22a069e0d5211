import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { bodyValidator } from "../validate-body";
import { authPlugin } from "../../auth/auth-plugin";
import type { Services } from "../../services";
import { nsidOf, resolveTenant } from "../tenant";
import { createKey, keyEnvelope, listKeys, revokeKey } from "./key-service";
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
  const routes = new Elysia({ name: "keys", normalize: false }).use(authPlugin(services));
  for (const base of ["/v1/namespaces/:nsid/keys", "/v1/keys"] as const) {
    routes
      .get(
        base,
        async ({ principal, params }) => {
          const tenant = await resolveTenant(services, principal, nsidOf(params));
          return { data: (await listKeys(services, tenant)).map(keyEnvelope) };
        },
        { scope: "keys:read", detail: { summary: "List the namespace's API keys (never the secret)", tags: ["keys"], "x-scope": "keys:read" } },
      )
      .post(
        base,
        async ({ principal, params, body, set }) => {
          const input = validateCreate(body);
          const tenant = await resolveTenant(services, principal, nsidOf(params));
          const created = await createKey(services, principal, tenant.namespaceId, input, principal);
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
        async ({ principal, params }) => revokeKey(services, await resolveTenant(services, principal, nsidOf(params)), params.id),
        { scope: "keys:write", detail: { summary: "Revoke an API key", tags: ["keys"], "x-scope": "keys:write" } },
      );
  }
  return routes;
}
