import { Type } from "@sinclair/typebox";
import { BudgetSpecSchema, checkShape, type BudgetSpec } from "../../policy/policy-spec";
import type { Services } from "../../services";
import { bodyValidator } from "../validate-body";
import { budgetEnvelope } from "./policy-envelopes";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { kindHandlers, PolicyName, routeDoc, scopeOf } from "./policy-route-support";
import * as service from "./policy-service";

// Shapes only; the budget rules (and their messages) are BudgetSpecSchema's, checked below.
const validateCreate = bodyValidator(
  Type.Object({ name: PolicyName, window: Type.Unknown(), limit_micro_usd: Type.Unknown() }, { additionalProperties: false }),
);
const validateUpdate = bodyValidator(
  Type.Object(
    { name: Type.Optional(PolicyName), window: Type.Optional(Type.Unknown()), limit_micro_usd: Type.Optional(Type.Unknown()) },
    { additionalProperties: false },
  ),
);

/** Budgets: typed sugar over policies of kind `budget`; toggled with the generic disable/enable. */
export function budgetRoutes(services: Services) {
  const handlers = kindHandlers(services, "budget", budgetEnvelope);
  return namespaceScopedRoutes("budgets", services, (routes, base) =>
    routes
      .get(`${base}/budgets`, handlers.list, routeDoc("policy:read", "List the namespace's budgets"))
      .get(`${base}/budgets/:id`, handlers.get, routeDoc("policy:read", "Get a budget"))
      .post(
        `${base}/budgets`,
        async ({ principal, params, body }) => {
          const scope = await scopeOf(services, principal, params);
          const input = validateCreate(body);
          const spec = checkShape(BudgetSpecSchema, { window: input.window, limit_micro_usd: input.limit_micro_usd }, "");
          return budgetEnvelope(await service.createPolicy(services, scope, { name: input.name, kind: "budget", spec }));
        },
        routeDoc("policy:write", "Create a budget", validateCreate.doc),
      )
      .put(
        `${base}/budgets/:id`,
        async ({ principal, params, body }) => {
          const scope = await scopeOf(services, principal, params);
          const input = validateUpdate(body);
          const row = await service.updatePolicy(services, scope, params.id, "budget", (current) => {
            const stored = current.spec as BudgetSpec;
            const merged = { window: input.window ?? stored.window, limit_micro_usd: input.limit_micro_usd ?? stored.limit_micro_usd };
            return { name: input.name, spec: checkShape(BudgetSpecSchema, merged, "") };
          });
          return budgetEnvelope(row);
        },
        routeDoc("policy:write", "Change a budget (absent fields unchanged)", validateUpdate.doc),
      )
      .delete(`${base}/budgets/:id`, handlers.remove, routeDoc("policy:write", "Delete a budget and its bindings")),
  );
}
