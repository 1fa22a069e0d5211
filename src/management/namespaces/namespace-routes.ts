import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { bodyValidator } from "../validate-body";
import { authPlugin } from "../../auth/auth-plugin";
import { resolveNamespace } from "../../auth/resolve-namespace";
import { newId } from "../../ids";
import { conflict, ApiError } from "../../errors/api-error";
import { archiveNamespace, insertNamespace, listLiveNamespaces, type NamespaceRow } from "../../db/queries/namespaces";
import { findLiveNamespace } from "../../db/queries/namespaces";
import { isUniqueViolation } from "../../db/errors";
import type { Services } from "../../services";

function envelope(row: NamespaceRow) {
  return { id: row.id, name: row.name, created_at: row.created_at.toISOString() };
}

const validateCreate = bodyValidator(
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 100, pattern: "^\\S(.*\\S)?$" }) }, { additionalProperties: false }),
);

export function namespaceRoutes(services: Services) {
  const sql = services.db.sql;
  return new Elysia({ name: "namespaces", normalize: false })
    .use(authPlugin(services))
    .get(
      "/v1/namespaces",
      async ({ principal }) => {
        // A namespace-baked credential sees only its own namespace.
        if (principal.namespaceId !== null) {
          const own = await findLiveNamespace(sql, principal.namespaceId, principal.accountId);
          return { data: own ? [envelope(own)] : [] };
        }
        return { data: (await listLiveNamespaces(sql, principal.accountId)).map(envelope) };
      },
      { scope: "namespace:read", detail: { summary: "List the caller's live namespaces, oldest first", tags: ["namespaces"], "x-scope": "namespace:read" } },
    )
    .post(
      "/v1/namespaces",
      async ({ principal, body: raw }) => {
        const body = validateCreate(raw);
        if (principal.namespaceId !== null) {
          throw new ApiError("forbidden", "a namespace-bound credential cannot create namespaces");
        }
        try {
          return envelope(await insertNamespace(sql, newId("ns"), principal.accountId, body.name));
        } catch (error) {
          if (isUniqueViolation(error)) throw conflict(`a namespace named "${body.name}" already exists`);
          throw error;
        }
      },
      {
        scope: "namespace:write",
        detail: { summary: "Create a namespace (name unique among live namespaces)", tags: ["namespaces"], "x-scope": "namespace:write", ...validateCreate.doc },
      },
    )
    .delete(
      "/v1/namespaces/:nsid",
      async ({ principal, params }) => {
        const namespace = await resolveNamespace(sql, principal, params.nsid);
        const result = await archiveNamespace(sql, namespace.id, principal.accountId);
        if (result.outcome === "last_namespace") throw conflict("cannot delete the account's last namespace");
        if (result.outcome === "not_found") throw new ApiError("not_found", "namespace not found");
        for (const keyId of result.revokedKeyIds) services.credentials.invalidate(keyId);
        for (const grantId of result.destroyedGrantIds) services.credentials.invalidate(grantId);
        return { deleted: true };
      },
      {
        scope: "namespace:write",
        detail: {
          summary: "Archive a namespace; its keys, OAuth tokens and clients, policies and BYOK keys are destroyed",
          tags: ["namespaces"],
          "x-scope": "namespace:write",
        },
      },
    );
}
