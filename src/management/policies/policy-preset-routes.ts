import { Type } from "@sinclair/typebox";
import { validatePresetClauses, type PresetSpec } from "../../policy/policy-spec";
import type { Services } from "../../services";
import { bodyValidator } from "../validate-body";
import { policyPresetEnvelope } from "./policy-envelopes";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { kindHandlers, PolicyName, routeDoc, scopeOf } from "./policy-route-support";
import * as service from "./policy-service";

// Shapes only; each clause is validated like its own kind (validatePresetClauses).
const clauses = { guardrail: Type.Optional(Type.Unknown()), budget: Type.Optional(Type.Unknown()), rate_limit: Type.Optional(Type.Unknown()) };
const validateCreate = bodyValidator(Type.Object({ name: PolicyName, ...clauses }, { additionalProperties: false }));
const validateUpdate = bodyValidator(
  Type.Object(
    {
      name: Type.Optional(PolicyName),
      ...clauses,
      clear_guardrail: Type.Optional(Type.Boolean()),
      clear_budget: Type.Optional(Type.Boolean()),
      clear_rate_limit: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);

const CLAUSES = ["guardrail", "budget", "rate_limit"] as const;

/**
 * Policy presets (bundles, under `…/presets`, docs/api/policies.md; not routing presets):
 * policies of kind `preset` bundling at most a guardrail, a
 * budget and a rate limit. PUT: an absent clause is unchanged, and so is a JSON null (it
 * is not a clear); `clear_<clause>: true` removes the clause, even when the body also
 * supplies it. A supplied clause replaces the stored one whole.
 */
export function policyPresetRoutes(services: Services) {
  const handlers = kindHandlers(services, "preset", policyPresetEnvelope);
  return namespaceScopedRoutes("policy-presets", services, (routes, base) =>
    routes
      .get(`${base}/presets`, handlers.list, routeDoc("policy:read", "List the namespace's presets"))
      .get(`${base}/presets/:id`, handlers.get, routeDoc("policy:read", "Get a preset"))
      .post(
        `${base}/presets`,
        async ({ principal, params, body }) => {
          const scope = await scopeOf(services, principal, params);
          const input = validateCreate(body);
          const given = validatePresetClauses(input, "");
          const spec: PresetSpec = { guardrail: given.guardrail ?? null, budget: given.budget ?? null, rate_limit: given.rate_limit ?? null };
          return policyPresetEnvelope(await service.createPolicy(services, scope, { name: input.name, kind: "preset", spec }));
        },
        routeDoc("policy:write", "Create a preset (an empty one is a valid no-op)", validateCreate.doc),
      )
      .put(
        `${base}/presets/:id`,
        async ({ principal, params, body }) => {
          const scope = await scopeOf(services, principal, params);
          const input = validateUpdate(body);
          const given = validatePresetClauses(input, "");
          const row = await service.updatePolicy(services, scope, params.id, "preset", (current) => {
            const spec = { ...(current.spec as PresetSpec) } as Record<(typeof CLAUSES)[number], unknown>;
            for (const clause of CLAUSES) {
              if (input[`clear_${clause}`] === true) spec[clause] = null;
              else if (given[clause] !== undefined) spec[clause] = given[clause];
              else spec[clause] ??= null;
            }
            return { name: input.name, spec: spec as unknown as PresetSpec };
          });
          return policyPresetEnvelope(row);
        },
        routeDoc("policy:write", "Change a preset: absent or null = unchanged, clear_<clause> removes one", validateUpdate.doc),
      )
      .delete(`${base}/presets/:id`, handlers.remove, routeDoc("policy:write", "Delete a preset and its bindings")),
  );
}
