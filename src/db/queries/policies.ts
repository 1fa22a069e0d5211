import type { Sql } from "../connect-database";
import type { TenantIds } from "./tenant-ids";
import { runQuery, runQueryRow } from "./run-query";

/** A policy row as the management API and the policy store read it; `spec` is the stored JSON. */
export interface PolicyRow {
  id: string;
  name: string;
  kind: string;
  spec: unknown;
  disabled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface PolicyBindingRow {
  id: string;
  policy_id: string;
  principal_type: string;
  principal_id: string;
  created_at: Date;
}

/** A policy together with the principal one of its bindings names (the policy store's fill). */
export interface BoundPolicyRow {
  principal_type: string;
  principal_id: string;
  id: string;
  name: string;
  kind: string;
  spec: unknown;
  disabled_at: Date | null;
}

export interface NewPolicy {
  id: string;
  name: string;
  kind: string;
  spec: object;
}

export async function insertPolicy(sql: Sql, tenant: TenantIds, policy: NewPolicy): Promise<PolicyRow> {
  const [row] = await runQuery<PolicyRow>(sql, "insertPolicy", [
    policy.id,
    tenant.accountId,
    tenant.namespaceId,
    policy.name,
    policy.kind,
    JSON.stringify(policy.spec),
  ]);
  return row!;
}

export function listPolicies(sql: Sql, tenant: TenantIds, kind: string | null): Promise<PolicyRow[]> {
  return runQuery<PolicyRow>(sql, "listPolicies", [tenant.namespaceId, tenant.accountId, kind]);
}

export async function findPolicy(sql: Sql, tenant: TenantIds, policyId: string): Promise<PolicyRow | undefined> {
  return runQueryRow<PolicyRow>(sql, "findPolicy", [policyId, tenant.namespaceId, tenant.accountId]);
}

/**
 * Reads a policy, lets `change` compute the new name and spec from it, and writes them,
 * the row locked in between so two concurrent partial updates cannot lose each other's
 * clauses. `change` may throw (validation); nothing is written then. Undefined when the
 * policy is not the tenant's.
 */
export function updatePolicyWith(
  sql: Sql,
  tenant: TenantIds,
  policyId: string,
  change: (current: PolicyRow) => { name?: string; spec?: object },
): Promise<PolicyRow | undefined> {
  return sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql;
    const [current] = await runQuery<PolicyRow>(tx, "findPolicyForUpdate", [policyId, tenant.namespaceId, tenant.accountId]);
    if (!current) return undefined;
    const next = change(current);
    return runQueryRow<PolicyRow>(tx, "updatePolicy", [
      policyId,
      tenant.namespaceId,
      tenant.accountId,
      next.name ?? null,
      next.spec === undefined ? null : JSON.stringify(next.spec),
    ]);
  });
}

/** Stamps or clears disabled_at; false when the policy is not the tenant's. */
export async function setPolicyDisabled(sql: Sql, tenant: TenantIds, policyId: string, disabled: boolean): Promise<boolean> {
  const rows = await runQuery(sql, "setPolicyDisabled", [policyId, tenant.namespaceId, tenant.accountId, disabled]);
  return rows.length > 0;
}

/** Deletes a policy and, by cascade, its bindings; false when it is not the tenant's. */
export async function deletePolicy(sql: Sql, tenant: TenantIds, policyId: string): Promise<boolean> {
  const rows = await runQuery(sql, "deletePolicy", [policyId, tenant.namespaceId, tenant.accountId]);
  return rows.length > 0;
}

/**
 * Binds a principal to the tenant's policy and returns the binding id; binding the
 * same principal again returns the existing binding's id. Undefined when the policy
 * is not the tenant's.
 */
export async function bindPolicy(
  sql: Sql,
  tenant: TenantIds,
  binding: { id: string; policyId: string; principalType: string; principalId: string },
): Promise<string | undefined> {
  const target = [binding.policyId, binding.principalType, binding.principalId, tenant.namespaceId, tenant.accountId];
  const [inserted] = await runQuery<{ id: string }>(sql, "insertBinding", [binding.id, ...target]);
  if (inserted) return inserted.id;
  const [existing] = await runQuery<{ id: string }>(sql, "findBinding", target);
  return existing?.id;
}

/** Removes one binding of the tenant's policy; the principal it named, or undefined. */
export async function unbindPolicy(
  sql: Sql,
  tenant: TenantIds,
  policyId: string,
  bindingId: string,
): Promise<{ principal_type: string; principal_id: string } | undefined> {
  const [row] = await runQuery<{ principal_type: string; principal_id: string }>(sql, "deleteBinding", [
    bindingId,
    policyId,
    tenant.namespaceId,
    tenant.accountId,
  ]);
  return row;
}

export function listBindings(sql: Sql, tenant: TenantIds, policyId: string): Promise<PolicyBindingRow[]> {
  return runQuery<PolicyBindingRow>(sql, "listBindings", [policyId, tenant.namespaceId, tenant.accountId]);
}

export function listNamespaceBindings(sql: Sql, tenant: TenantIds): Promise<PolicyBindingRow[]> {
  return runQuery<PolicyBindingRow>(sql, "listNamespaceBindings", [tenant.namespaceId, tenant.accountId]);
}

export function listPrincipalPolicies(sql: Sql, tenant: TenantIds, principalType: string, principalId: string): Promise<PolicyRow[]> {
  return runQuery<PolicyRow>(sql, "listPrincipalPolicies", [principalType, principalId, tenant.namespaceId, tenant.accountId]);
}

/** Every policy of the account bound to any of the principals, with the principal each binding names. */
export function findBoundPolicies(
  sql: Sql,
  accountId: string,
  principals: readonly { type: string; id: string }[],
): Promise<BoundPolicyRow[]> {
  return runQuery<BoundPolicyRow>(sql, "findBoundPolicies", [principals.map((p) => p.type), principals.map((p) => p.id), accountId]);
}

/** The account's API key as a binding target: its namespace (null = account-wide), or undefined. */
export async function findKeyPrincipal(sql: Sql, keyId: string, accountId: string): Promise<{ namespace_id: string | null } | undefined> {
  const [row] = await runQuery<{ id: string; namespace_id: string | null }>(sql, "findKeyPrincipal", [keyId, accountId]);
  return row;
}

/** A budget counter as admission reads it. */
export interface BudgetCounterStatusRow {
  counter_key: string;
  reserved_micro_usd: number;
  spent_micro_usd: number;
}

/** A rate-limit counter's window as admission counts it. */
export interface RateLimitCounterStatusRow {
  counter_key: string;
  used_requests: number;
  used_tokens: number;
  /** Whole seconds until the oldest admission in the window leaves it; null when none is inside. */
  resets_in_secs: number | null;
}

/** The counters of `policyId`'s budget (keys in order; `windowSecs` 0 = total); none unless the policy is the tenant's. */
export function budgetCounterStatus(sql: Sql, tenant: TenantIds, policyId: string, keys: readonly string[], windowSecs: number): Promise<BudgetCounterStatusRow[]> {
  return runQuery<BudgetCounterStatusRow>(sql, "budgetCounterStatus", [keys, windowSecs, policyId, tenant.namespaceId, tenant.accountId]);
}

/** The counters of `policyId`'s rate limit over its window (keys in order); none unless the policy is the tenant's. */
export function rateLimitCounterStatus(sql: Sql, tenant: TenantIds, policyId: string, keys: readonly string[], windowSecs: number): Promise<RateLimitCounterStatusRow[]> {
  return runQuery<RateLimitCounterStatusRow>(sql, "rateLimitCounterStatus", [keys, windowSecs, policyId, tenant.namespaceId, tenant.accountId]);
}
