import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { routeDocs } from "../route-doc";
import { bodyValidator } from "../validate-body";
import { authPlugin } from "../../auth/auth-plugin";
import type { Services } from "../../services";
import { resolveTenant } from "../../identity/tenant";
import { createNamespace, listNamespaces, namespaceEnvelope, removeNamespace } from "./namespace-service";

const validateCreate = bodyValidator(
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 100, pattern: "^\\S(.*\\S)?$" }) }, { additionalProperties: false }),
);

const routeDoc = routeDocs<"namespace:read" | "namespace:write">("namespaces");

export function namespaceRoutes(services: Services) {
  return new Elysia({ name: "namespaces", normalize: false })
    .use(authPlugin(services))
    .get(
      "/v1/namespaces",
      async ({ principal }) => ({ data: (await listNamespaces(services, principal)).map(namespaceEnvelope) }),
      routeDoc("namespace:read", "List the caller's live namespaces, oldest first"),
    )
    .post(
      "/v1/namespaces",
      async ({ principal, body }) => namespaceEnvelope(await createNamespace(services, principal, validateCreate(body).name)),
      routeDoc("namespace:write", "Create a namespace (name unique among live namespaces)", validateCreate.doc),
    )
    .delete(
      "/v1/namespaces/:nsid",
      async ({ principal, params }) => removeNamespace(services, await resolveTenant(services, principal, params.nsid)),
      routeDoc("namespace:write", "Archive a namespace; its keys, OAuth tokens and clients, policies and BYOK keys are destroyed"),
    );
}
