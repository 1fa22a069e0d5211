import { Type } from "@sinclair/typebox";
import type { Principal } from "../../auth/principal";
import type { Policy } from "./policy-service";
import type { PolicyKind } from "../../policy/policy-spec";
import type { Services } from "../../services";
import { routeDocs } from "../route-doc";
import { tenantOfPath } from "../../identity/tenant";
import * as service from "./policy-service";
import type { PolicyScope } from "./policy-service";

/** The namespace a policy route acts in (`{nsid}`, `me` on the flat paths), checked by the one tenant resolver first. */
export async function scopeOf(services: Services, principal: Principal, params: Record<string, string> | undefined): Promise<PolicyScope> {
  return { caller: principal, ...(await tenantOfPath(services, principal, params)) };
}

/** A policy's display name: non-empty, no leading or trailing whitespace. */
export const PolicyName = Type.String({ minLength: 1, maxLength: 200, pattern: "^\\S(.*\\S)?$" });

/** The route options every policy route shares: its scope (checked by the auth macro) and its OpenAPI entry. */
export const routeDoc = routeDocs<"policy:read" | "policy:write">("policies");

type KindRoute = { principal: Principal; params: Record<string, string> };
type OnePolicyRoute = { principal: Principal; params: Record<string, string> & { id: string } };

/**
 * The list, get and delete handlers of one kind's typed routes (`…/budgets`, `…/presets`):
 * the policy service's calls for that kind, answered in the kind's envelope.
 */
export function kindHandlers<Envelope>(services: Services, kind: PolicyKind, envelope: (policy: Policy) => Envelope) {
  return {
    list: async ({ principal, params }: KindRoute) => ({ data: (await service.listPolicies(services, await scopeOf(services, principal, params), kind)).map(envelope) }),
    get: async ({ principal, params }: OnePolicyRoute) => envelope(await service.getPolicy(services, await scopeOf(services, principal, params), params.id, kind)),
    remove: async ({ principal, params }: OnePolicyRoute) => service.removePolicy(services, await scopeOf(services, principal, params), params.id, kind),
  };
}
