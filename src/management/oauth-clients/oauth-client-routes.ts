import { markNoStore } from "../../auth/tokens";
import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { tenantOfPath } from "../../identity/tenant";
import { validateCreate, validateUpdate } from "./oauth-client-body";
import * as service from "./oauth-client-service";

const routeDoc = routeDocs<"clients:read" | "clients:write">("oauth clients");

/**
 * OAuth clients (docs/api/identity.md "Identity: OAuth, clients, accounts"): third-party apps registered by a namespace to ask
 * users for access through the authorization server. Paths take the client's `id` or
 * its public `client_id`.
 */
export function oauthClientRoutes(services: Services) {
  return namespaceScopedRoutes("oauth-clients", services, (routes, base) =>
    routes
      .get(
        `${base}/oauth/clients`,
        async ({ principal, params }) => service.listClients(services, await tenantOfPath(services, principal, params)),
        routeDoc("clients:read", "List the namespace's OAuth clients (never a secret)"),
      )
      .post(
        `${base}/oauth/clients`,
        async ({ principal, params, body, set }) => {
          const input = validateCreate(body);
          const created = await service.createClient(services, await tenantOfPath(services, principal, params), input);
          markNoStore(set);
          return created;
        },
        routeDoc("clients:write", "Register an OAuth client; a confidential client's secret is returned once", validateCreate.doc),
      )
      .get(
        `${base}/oauth/clients/:id`,
        async ({ principal, params }) => service.getClient(services, await tenantOfPath(services, principal, params), params.id),
        routeDoc("clients:read", "Get an OAuth client by its id or client_id"),
      )
      .put(
        `${base}/oauth/clients/:id`,
        async ({ principal, params, body }) => {
          const input = validateUpdate(body);
          return service.updateClient(services, await tenantOfPath(services, principal, params), params.id, input);
        },
        routeDoc("clients:write", "Change an OAuth client: each list given replaces the stored one whole", validateUpdate.doc),
      )
      .delete(
        `${base}/oauth/clients/:id`,
        async ({ principal, params }) => service.removeClient(services, await tenantOfPath(services, principal, params), params.id),
        routeDoc("clients:write", "Delete an OAuth client; every token issued to it is revoked"),
      ),
  );
}
