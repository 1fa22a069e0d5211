import { Elysia } from "elysia";
import { authPlugin } from "../../auth/auth-plugin";
import type { Principal } from "../../auth/principal";
import type { Services } from "../../services";
import { nsidOf, resolveTenant } from "../tenant";
import { createDoc, parseCreateBody, parseReplaceBody, replaceDoc } from "./routing-preset-body";
import * as service from "./routing-preset-service";

/** Namespace-scoped and in the flat form (the credential's own namespace). */
const BASES = ["/v1/namespaces/:nsid", "/v1"] as const;

function routeDoc(scope: "routing_preset:read" | "routing_preset:write", summary: string, extra?: typeof createDoc) {
  return { scope, detail: { summary, tags: ["routing presets"], "x-scope": scope, ...extra } };
}

/**
 * Routing presets ("virtual models"): a request naming `@<name>` gets the preset's model,
 * system prompt, parameter defaults and provider choice (README "Routing presets").
 */
export function routingPresetRoutes(services: Services) {
  const tenantOf = (principal: Principal, params: Record<string, string> | undefined) => resolveTenant(services, principal, nsidOf(params));
  const routes = new Elysia({ name: "routing-presets", normalize: false }).use(authPlugin(services));
  for (const base of BASES) {
    routes
      .get(
        `${base}/routing-presets`,
        async ({ principal, params }) => ({ data: await service.listPresets(services, await tenantOf(principal, params)) }),
        routeDoc("routing_preset:read", "List the namespace's routing presets, disabled ones included"),
      )
      .post(
        `${base}/routing-presets`,
        async ({ principal, params, body }) => {
          const tenant = await tenantOf(principal, params);
          const input = parseCreateBody(body);
          return service.createPreset(services, tenant, input.name, input.spec);
        },
        routeDoc("routing_preset:write", "Create a routing preset (the name is unique in the namespace: 409 otherwise)", createDoc),
      )
      .get(
        `${base}/routing-presets/:id`,
        async ({ principal, params }) => service.getPreset(services, await tenantOf(principal, params), params.id),
        routeDoc("routing_preset:read", "Get a routing preset"),
      )
      .put(
        `${base}/routing-presets/:id`,
        async ({ principal, params, body }) => {
          const tenant = await tenantOf(principal, params);
          const input = parseReplaceBody(body);
          return service.replacePreset(services, tenant, params.id, input.name, input.spec);
        },
        routeDoc("routing_preset:write", "Replace a routing preset's spec as a whole (omitted fields become null or empty; an absent name is unchanged)", replaceDoc),
      )
      .delete(
        `${base}/routing-presets/:id`,
        async ({ principal, params }) => service.removePreset(services, await tenantOf(principal, params), params.id),
        routeDoc("routing_preset:write", "Delete a routing preset"),
      )
      .post(
        `${base}/routing-presets/:id/disable`,
        async ({ principal, params }) => service.setDisabled(services, await tenantOf(principal, params), params.id, true),
        routeDoc("routing_preset:write", "Disable a routing preset (idempotent): requests naming it are refused like an unknown one"),
      )
      .post(
        `${base}/routing-presets/:id/enable`,
        async ({ principal, params }) => service.setDisabled(services, await tenantOf(principal, params), params.id, false),
        routeDoc("routing_preset:write", "Enable a routing preset (idempotent)"),
      );
  }
  return routes;
}
