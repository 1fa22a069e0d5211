import type { Caller } from "../../auth/principal";
import { newId } from "../../ids";
import {
  bindPolicy,
  budgetCounterStatus,
  deletePolicy,
  findPolicy,
  insertPolicy,
  listBindings,
  listNamespaceBindings,
  listPolicies as listPolicyRows,
  listPrincipalPolicies,
  rateLimitCounterStatus,
  setPolicyDisabled,
  unbindPolicy,
  updatePolicyWith,
  type PolicyBindingRow,
  type PolicyRow,
} from "../../db/queries/policies";
import { ApiError, notFound } from "../../errors/api-error";
import type { PrincipalRef } from "../../policy/effective-policy";
import { effectivePolicyView, type EffectivePolicyView } from "../../policy/effective-policy-view";
import type { BudgetSpec, PolicyKind, PolicySpec, PresetSpec, RateLimitSpec } from "../../policy/policy-spec";
import { BUDGET_WINDOWS } from "../../admission/budget-windows";
import { policyCounterKey } from "../../policy/compose-policies";
import { budgetStatus, rateLimitStatus, type BoundPrincipal, type BudgetStatus, type PolicyStatus, type RateLimitStatus } from "./policy-status";
import { requestPrincipals } from "../../policy/request-principals";
import type { Services } from "../../services";
import type { Tenant } from "../../identity/tenant";
import { principalsOfTarget, resolvePrincipalTarget } from "../../identity/principal-target";

/** What the policy service uses: the database, `me` (where an account-wide key's requests are attributed) and this instance's policy store (to invalidate it). */
export type PolicyServiceDeps = Pick<Services, "db" | "me" | "policies">;

/** The namespace a policy call acts in (resolveTenant's answer), and the caller, whose own bindings it may not loosen. */
export interface PolicyScope extends Tenant {
  caller: Caller;
}

/** A policy as a listing or a page shows it; `spec` is its kind's flat inner body as stored. */
export interface Policy {
  id: string;
  name: string;
  kind: string;
  spec: unknown;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One principal a policy is bound to. */
export interface PolicyBinding {
  id: string;
  policyId: string;
  principalType: string;
  principalId: string;
  createdAt: Date;
}

function policyOf(row: PolicyRow): Policy {
  return { id: row.id, name: row.name, kind: row.kind, spec: row.spec, disabledAt: row.disabled_at, createdAt: row.created_at, updatedAt: row.updated_at };
}

function bindingOf(row: PolicyBindingRow): PolicyBinding {
  return { id: row.id, policyId: row.policy_id, principalType: row.principal_type, principalId: row.principal_id, createdAt: row.created_at };
}

/** What a missing policy is called in the 404: the typed routes name their own kind. */
const KIND_LABEL: Record<PolicyKind | "any", string> = { any: "policy", budget: "budget", rate_limit: "policy", guardrail: "policy", preset: "preset" };

/** The namespace's policies (of `kind`, when given), disabled ones included. */
export async function listPolicies(deps: PolicyServiceDeps, scope: PolicyScope, kind: PolicyKind | null): Promise<Policy[]> {
  return (await listPolicyRows(deps.db.sql, scope, kind)).map(policyOf);
}

/** A policy of the scope's namespace (of `kind`, for the typed routes), or a 404. */
export async function getPolicy(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string, kind?: PolicyKind): Promise<Policy> {
  const row = await findPolicy(deps.db.sql, scope, policyId);
  if (!row || (kind !== undefined && row.kind !== kind)) throw notFound(KIND_LABEL[kind ?? "any"]);
  return policyOf(row);
}

/**
 * The credentials a caller presents or was minted through (and an OAuth token's client),
 * as principals: the request principals less the namespace. None for a person in the
 * console.
 */
function callerCredentials(caller: Caller): PrincipalRef[] {
  if (caller.kind === undefined || caller.id === undefined) return [];
  return requestPrincipals(null, { kind: caller.kind, id: caller.id, ancestorKeyIds: caller.ancestorKeyIds, ancestorGrantId: caller.ancestorGrantId }, caller.oauthClientId ?? null);
}

/**
 * A credential may not loosen a policy that binds it (or a credential it was minted
 * through): changing, disabling, deleting or unbinding it is a 403. The policy must exist
 * in the scope first, so another tenant's stays a 404.
 */
async function refuseSelfBound(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string, kind?: PolicyKind): Promise<void> {
  const own = callerCredentials(scope.caller);
  if (own.length === 0) return;
  await getPolicy(deps, scope, policyId, kind);
  const bindings = await listBindings(deps.db.sql, scope, policyId);
  const bindsCaller = bindings.some((binding) => own.some((p) => p.type === binding.principal_type && p.id === binding.principal_id));
  if (bindsCaller) throw new ApiError("permission_denied", "a credential cannot change a policy bound to itself or to the credential it was minted by");
}

export async function createPolicy(deps: PolicyServiceDeps, scope: PolicyScope, input: { name: string; kind: PolicyKind; spec: PolicySpec }): Promise<Policy> {
  return policyOf(await insertPolicy(deps.db.sql, scope, { id: newId("pol"), name: input.name, kind: input.kind, spec: input.spec }));
}

/**
 * Changes a policy's name and/or spec. `change` sees the current policy (its row locked) and
 * returns what to write; it validates and may throw. A policy of another kind than
 * `kind` is a 404 for the typed routes.
 */
export async function updatePolicy(
  deps: PolicyServiceDeps,
  scope: PolicyScope,
  policyId: string,
  kind: PolicyKind | undefined,
  change: (current: Policy) => { name?: string; spec?: PolicySpec },
): Promise<Policy> {
  await refuseSelfBound(deps, scope, policyId, kind);
  const row = await updatePolicyWith(deps.db.sql, scope, policyId, (current) => {
    if (kind !== undefined && current.kind !== kind) throw notFound(KIND_LABEL[kind]);
    return change(policyOf(current));
  });
  if (!row) throw notFound(KIND_LABEL[kind ?? "any"]);
  deps.policies.policyChanged(policyId);
  return policyOf(row);
}

export async function removePolicy(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string, kind?: PolicyKind): Promise<{ deleted: true }> {
  if (kind !== undefined) await getPolicy(deps, scope, policyId, kind);
  await refuseSelfBound(deps, scope, policyId, kind);
  if (!(await deletePolicy(deps.db.sql, scope, policyId))) throw notFound(KIND_LABEL[kind ?? "any"]);
  deps.policies.policyChanged(policyId);
  return { deleted: true };
}

export async function setDisabled(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string, disabled: boolean): Promise<{ disabled: boolean }> {
  // Enabling only ever tightens what binds the caller.
  if (disabled) await refuseSelfBound(deps, scope, policyId);
  if (!(await setPolicyDisabled(deps.db.sql, scope, policyId, disabled))) throw notFound("policy");
  deps.policies.policyChanged(policyId);
  return { disabled };
}

/** Binds a principal the namespace may name; binding one twice returns the first binding's id. */
export async function bind(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string, principal: PrincipalRef): Promise<{ binding_id: string }> {
  await getPolicy(deps, scope, policyId);
  await resolvePrincipalTarget(deps, scope.caller, scope.namespaceId, principal);
  const bindingId = await bindPolicy(deps.db.sql, scope, { id: newId("pb"), policyId, principalType: principal.type, principalId: principal.id });
  // Deleted between the check and the insert.
  if (bindingId === undefined) throw notFound("policy");
  deps.policies.principalChanged(scope.accountId, principal);
  return { binding_id: bindingId };
}

export async function unbind(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string, bindingId: string): Promise<{ unbound: true }> {
  await getPolicy(deps, scope, policyId);
  await refuseSelfBound(deps, scope, policyId);
  const removed = await unbindPolicy(deps.db.sql, scope, policyId, bindingId);
  if (!removed) throw notFound("binding");
  // The row came from a table whose check constraint allows only the four principal types.
  deps.policies.principalChanged(scope.accountId, { type: removed.principal_type as PrincipalRef["type"], id: removed.principal_id });
  return { unbound: true };
}

export async function bindingsOf(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string): Promise<PolicyBinding[]> {
  await getPolicy(deps, scope, policyId);
  return (await listBindings(deps.db.sql, scope, policyId)).map(bindingOf);
}

/** Every binding of every policy of the scope's namespace, oldest first. */
export async function namespaceBindings(deps: PolicyServiceDeps, scope: PolicyScope): Promise<PolicyBinding[]> {
  return (await listNamespaceBindings(deps.db.sql, scope)).map(bindingOf);
}

/** The namespace's policies bound directly to one principal, disabled ones included. */
export async function policiesOfPrincipal(deps: PolicyServiceDeps, scope: PolicyScope, principal: PrincipalRef): Promise<Policy[]> {
  await resolvePrincipalTarget(deps, scope.caller, scope.namespaceId, principal);
  return (await listPrincipalPolicies(deps.db.sql, scope, principal.type, principal.id)).map(policyOf);
}

/**
 * What applies to a request made as this principal: an API key's own policies, its
 * namespace's and those of every credential it was minted through, composed — read
 * through the same store the enforcement stage uses.
 */
export async function effectiveOf(deps: PolicyServiceDeps, scope: PolicyScope, principal: PrincipalRef): Promise<EffectivePolicyView> {
  const target = await resolvePrincipalTarget(deps, scope.caller, scope.namespaceId, principal);
  return effectivePolicyView(await deps.policies.effectivePolicy(scope.accountId, principalsOfTarget(target)));
}

/**
 * How much of a budget or rate limit is used (policy-status.ts), read from the counters
 * admission decides by, so every instance sharing the database reports the same figures.
 * Guardrails have nothing to count: `{ kind }`. Another tenant's policy is the 404 of a
 * missing one.
 */
export async function policyStatus(deps: PolicyServiceDeps, scope: PolicyScope, policyId: string): Promise<PolicyStatus> {
  const policy = await getPolicy(deps, scope, policyId);
  const bindings = await listBindings(deps.db.sql, scope, policyId);
  const principals: BoundPrincipal[] = bindings.map((b) => ({ principal_type: b.principal_type, principal_id: b.principal_id }));
  const budget = async (spec: BudgetSpec): Promise<BudgetStatus> => {
    const keys = principals.map((p) => policyCounterKey(policyId, "budget", { type: p.principal_type as PrincipalRef["type"], id: p.principal_id }));
    const counters = keys.length === 0 ? [] : await budgetCounterStatus(deps.db.sql, scope, policyId, keys, BUDGET_WINDOWS[spec.window].windowSecs);
    return budgetStatus(spec, principals, counters);
  };
  const rateLimit = async (spec: RateLimitSpec): Promise<RateLimitStatus> => {
    const keys = principals.map((p) => policyCounterKey(policyId, "rate_limit", { type: p.principal_type as PrincipalRef["type"], id: p.principal_id }));
    const counters = keys.length === 0 ? [] : await rateLimitCounterStatus(deps.db.sql, scope, policyId, keys, spec.window_secs);
    return rateLimitStatus(spec, principals, counters);
  };
  switch (policy.kind) {
    case "budget":
      return budget(policy.spec as BudgetSpec);
    case "rate_limit":
      return rateLimit(policy.spec as RateLimitSpec);
    case "preset": {
      const spec = policy.spec as PresetSpec;
      return {
        kind: "preset",
        ...(spec.budget ? { budget: await budget(spec.budget) } : {}),
        ...(spec.rate_limit ? { rate_limit: await rateLimit(spec.rate_limit) } : {}),
      };
    }
    default:
      return { kind: policy.kind };
  }
}
