import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { tenantOfPath } from "../../identity/tenant";
import { createDoc, parseCreateBody, parseReplaceBody, replaceDoc } from "./routing-preset-body";
import * as service from "./routing-preset-service";

const routeDoc = routeDocs<"routing_preset:read" | "routing_preset:write">("routing presets");

/**
 * Routing presets ("virtual models"): a request naming `@<name>` gets the preset's model,
 * system prompt, parameter defaults and provider choice (docs/api/routing-presets.md "Routing presets").
 */
export function routingPresetRoutes(services: Services) {
  return namespaceScopedRoutes("routing-presets", services, (routes, base) =>
    routes
      .get(
        `${base}/routing-presets`,
        async ({ principal, params }) => ({ data: await service.listPresets(services, await tenantOfPath(services, principal, params)) }),
        routeDoc("routing_preset:read", "List the namespace's routing presets, disabled ones included"),
      )
      .post(
        `${base}/routing-presets`,
        async ({ principal, params, body }) => {
          const tenant = await tenantOfPath(services, principal, params);
          const input = parseCreateBody(body);
          return service.createPreset(services, tenant, input.name, input.spec);
        },
        routeDoc("routing_preset:write", "Create a routing preset (the name is unique in the namespace: 409 otherwise)", createDoc),
      )
      .get(
        `${base}/routing-presets/:id`,
        async ({ principal, params }) => service.getPreset(services, await tenantOfPath(services, principal, params), params.id),
        routeDoc("routing_preset:read", "Get a routing preset"),
      )
      .put(
        `${base}/routing-presets/:id`,
        async ({ principal, params, body }) => {
          const tenant = await tenantOfPath(services, principal, params);
          const input = parseReplaceBody(body);
          return service.replacePreset(services, tenant, params.id, input.name, input.spec);
        },
        routeDoc("routing_preset:write", "Replace a routing preset's spec as a whole (omitted fields become null or empty; an absent name is unchanged)", replaceDoc),
      )
      .delete(
        `${base}/routing-presets/:id`,
        async ({ principal, params }) => service.removePreset(services, await tenantOfPath(services, principal, params), params.id),
        routeDoc("routing_preset:write", "Delete a routing preset"),
      )
      .post(
        `${base}/routing-presets/:id/disable`,
        async ({ principal, params }) => service.setDisabled(services, await tenantOfPath(services, principal, params), params.id, true),
        routeDoc("routing_preset:write", "Disable a routing preset (idempotent): requests naming it are refused like an unknown one"),
      )
      .post(
        `${base}/routing-presets/:id/enable`,
        async ({ principal, params }) => service.setDisabled(services, await tenantOfPath(services, principal, params), params.id, false),
        routeDoc("routing_preset:write", "Enable a routing preset (idempotent)"),
      ),
  );
}
