import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { authPlugin } from "../../auth/auth-plugin";
import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { bodyValidator } from "../validate-body";
import { deleteByokKey, listByokKeys, upsertByokKey } from "./byok-key-service";

const validateUpload = bodyValidator(
  Type.Object(
    {
      provider_name: Type.String({ minLength: 1, maxLength: 128 }),
      ciphertext_b64: Type.String({ minLength: 1, maxLength: 16_384 }),
      kek_id: Type.String({ minLength: 1, maxLength: 128 }),
      key_prefix: Type.String({ maxLength: 32 }),
      api_base: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 2048 }), Type.Null()])),
    },
    { additionalProperties: false },
  ),
);

const doc = routeDocs<"byok:read" | "byok:write">("byok");

/**
 * BYOK provider keys (docs/api/byok.md "BYOK"). An account-wide credential manages the account's keys
 * (and may delete a namespace's with `?namespace_id=`); a namespace-bound one writes and
 * deletes its namespace's alone, and sees those and the account's.
 */
export function byokKeyRoutes(services: Services) {
  return new Elysia({ name: "byok-keys", normalize: false })
    .use(authPlugin(services))
    .get("/v1/byok/keys", async ({ principal }) => ({ data: await listByokKeys(services, principal) }), doc("byok:read", "List the BYOK keys the caller's requests can use (never the ciphertext or the key)"))
    .post(
      "/v1/byok/keys",
      ({ principal, body }) => upsertByokKey(services, principal, validateUpload(body)),
      doc("byok:write", "Store the caller's key for a provider (its namespace's when the credential is bound to one), sealed to the current KEK (replaces any previous one)", validateUpload.doc),
    )
    .delete(
      "/v1/byok/keys/:provider",
      ({ principal, params, query }) => deleteByokKey(services, principal, params.provider, typeof query.namespace_id === "string" ? query.namespace_id : undefined),
      doc("byok:write", "Delete the caller's key for a provider (its namespace's when the credential is bound to one)"),
    );
}
