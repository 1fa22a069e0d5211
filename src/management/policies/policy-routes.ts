import { Type } from "@sinclair/typebox";
import { badRequest } from "../../errors/api-error";
import { isPolicyKind, POLICY_KINDS, validatePolicySpec, type PolicyKind } from "../../policy/policy-spec";
import type { Services } from "../../services";
import { bodyValidator } from "../validate-body";
import { bindingEnvelope, policyEnvelope } from "./policy-envelopes";
import { queryParameter } from "../route-doc";
import { namespaceScopedRoutes } from "../namespace-scoped-routes";
import { PolicyName, scopeOf, routeDoc } from "./policy-route-support";
import { parsePrincipalType } from "../../identity/principal-target";
import * as service from "./policy-service";
import { assertAddressableId } from "../../auth/path-ids";

const validateCreate = bodyValidator(Type.Object({ name: PolicyName, kind: Type.String(), spec: Type.Unknown() }, { additionalProperties: false }));
const validateUpdate = bodyValidator(
  Type.Object({ name: Type.Optional(PolicyName), kind: Type.Optional(Type.String()), spec: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
);
const validateBind = bodyValidator(
  Type.Object({ principal_type: Type.String(), principal_id: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
);

const KIND_LIST = POLICY_KINDS.map((kind) => `"${kind}"`).join(", ");

function parseKind(value: unknown): PolicyKind {
  if (!isPolicyKind(value)) throw badRequest(`kind must be one of ${KIND_LIST}`);
  return value;
}

/** `?kind=`: absent or empty = every kind; anything else must be a kind. */
function kindFilter(query: Record<string, unknown>): PolicyKind | null {
  const kind = query.kind;
  return kind === undefined || kind === "" ? null : parseKind(kind);
}

function requiredQuery(query: Record<string, unknown>, name: string): string {
  const value = query[name];
  if (typeof value !== "string" || value === "") throw badRequest(`${name} is required`);
  return value;
}

/**
 * Policies under /v1/namespaces/{nsid}/policies and the flat
 * /v1/policies (the caller's own namespace), plus /principals/{type}/{id}/policies.
 */
export function policyRoutes(services: Services) {
  return namespaceScopedRoutes("policies", services, (routes, base) =>
    routes
      .get(
        `${base}/policies`,
        async ({ principal, params, query }) => {
          const scope = await scopeOf(services, principal, params);
          return { data: (await service.listPolicies(services, scope, kindFilter(query))).map(policyEnvelope) };
        },
        routeDoc("policy:read", "List the namespace's policies, disabled ones included", {
          parameters: [queryParameter("kind", `Only policies of this kind: ${KIND_LIST}`, false)],
        }),
      )
      .post(
        `${base}/policies`,
        async ({ principal, params, body }) => {
          const scope = await scopeOf(services, principal, params);
          const input = validateCreate(body);
          const kind = parseKind(input.kind);
          const spec = validatePolicySpec(kind, input.spec);
          return policyEnvelope(await service.createPolicy(services, scope, { name: input.name, kind, spec }));
        },
        routeDoc("policy:write", "Create a policy", validateCreate.doc),
      )
      .get(
        `${base}/policies/effective`,
        async ({ principal, params, query }) => {
          const scope = await scopeOf(services, principal, params);
          const type = parsePrincipalType(requiredQuery(query, "principal_type"));
          const id = requiredQuery(query, "principal_id");
          assertAddressableId(id, "principal");
          return service.effectiveOf(services, scope, { type, id });
        },
        routeDoc("policy:read", "The composed policy a request made as this principal gets (its namespace's policies included)", {
          parameters: [
            queryParameter("principal_type", '"namespace", "api_key", "oauth_token" or "oauth_client"', true),
            queryParameter("principal_id", "The principal's id", true),
          ],
        }),
      )
      .get(
        `${base}/policies/:id`,
        async ({ principal, params }) => policyEnvelope(await service.getPolicy(services, await scopeOf(services, principal, params), params.id)),
        routeDoc("policy:read", "Get a policy"),
      )
      .put(
        `${base}/policies/:id`,
        async ({ principal, params, body }) => {
          const scope = await scopeOf(services, principal, params);
          const input = validateUpdate(body);
          const row = await service.updatePolicy(services, scope, params.id, undefined, (current) => {
            if (input.kind !== undefined && input.kind !== current.kind) throw badRequest("kind cannot be changed");
            const kind = parseKind(current.kind);
            return { name: input.name, spec: input.spec === undefined ? undefined : validatePolicySpec(kind, input.spec) };
          });
          return policyEnvelope(row);
        },
        routeDoc("policy:write", "Change a policy's name and/or spec (absent = unchanged; the kind is immutable)", validateUpdate.doc),
      )
      .delete(
        `${base}/policies/:id`,
        async ({ principal, params }) => service.removePolicy(services, await scopeOf(services, principal, params), params.id),
        routeDoc("policy:write", "Delete a policy and its bindings"),
      )
      .post(
        `${base}/policies/:id/bind`,
        async ({ principal, params, body }) => {
          const scope = await scopeOf(services, principal, params);
          const input = validateBind(body);
          const type = parsePrincipalType(input.principal_type);
          return service.bind(services, scope, params.id, { type, id: input.principal_id });
        },
        routeDoc("policy:write", "Bind the policy to a principal (binding the same one again returns its binding)", validateBind.doc),
      )
      .delete(
        `${base}/policies/:id/bind/:binding_id`,
        async ({ principal, params }) => service.unbind(services, await scopeOf(services, principal, params), params.id, params.binding_id),
        routeDoc("policy:write", "Remove one binding"),
      )
      .get(
        `${base}/policies/:id/status`,
        async ({ principal, params }) => service.policyStatus(services, await scopeOf(services, principal, params), params.id),
        routeDoc(
          "policy:read",
          "How much of the policy is used, from the counters admission decides by (every instance's): a budget's spent, reserved and remaining micro-USD in its window; a rate limit's requests and tokens in its window and the seconds until its oldest admission leaves it; a preset each clause it bundles; a guardrail only its kind. Bound to several principals, each has its own counter: the top level is the one nearest its limit, `principals` lists each",
        ),
      )
      .get(
        `${base}/policies/:id/bindings`,
        async ({ principal, params }) => ({
          data: (await service.bindingsOf(services, await scopeOf(services, principal, params), params.id)).map(bindingEnvelope),
        }),
        routeDoc("policy:read", "List the policy's bindings"),
      )
      .post(
        `${base}/policies/:id/disable`,
        async ({ principal, params }) => service.setDisabled(services, await scopeOf(services, principal, params), params.id, true),
        routeDoc("policy:write", "Disable a policy (idempotent; it stays listed, with disabled_at)"),
      )
      .post(
        `${base}/policies/:id/enable`,
        async ({ principal, params }) => service.setDisabled(services, await scopeOf(services, principal, params), params.id, false),
        routeDoc("policy:write", "Enable a policy (idempotent)"),
      )
      .get(
        `${base}/principals/:principal_type/:principal_id/policies`,
        async ({ principal, params }) => {
          const scope = await scopeOf(services, principal, params);
          const type = parsePrincipalType(params.principal_type);
          return { data: (await service.policiesOfPrincipal(services, scope, { type, id: params.principal_id })).map(policyEnvelope) };
        },
        routeDoc("policy:read", "The namespace's policies bound directly to a principal, disabled ones included"),
      ),
  );
}
