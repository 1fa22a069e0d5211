import type { Sql } from "../connect-database";
import type { TenantIds } from "./tenant-ids";
import { runQuery, runQueryRow } from "./run-query";

/** A routing preset as stored; `params` and `routing` are the stored JSON objects. */
export interface RoutingPresetRow {
  id: string;
  name: string;
  model: string | null;
  system_prompt: string | null;
  params: Record<string, unknown>;
  routing: Record<string, unknown>;
  disabled_at: Date | null;
}

/** The spec a create or a full replacement writes. */
export interface RoutingPresetSpec {
  model: string | null;
  system_prompt: string | null;
  params: Record<string, unknown>;
  routing: Record<string, unknown>;
}

function specParams(spec: RoutingPresetSpec) {
  return [spec.model, spec.system_prompt, JSON.stringify(spec.params), JSON.stringify(spec.routing)] as const;
}

/** Inserts a preset; a duplicate name in the namespace throws PostgreSQL's unique violation. */
export async function insertRoutingPreset(
  sql: Sql,
  tenant: TenantIds,
  preset: { id: string; name: string } & RoutingPresetSpec,
): Promise<RoutingPresetRow> {
  const [row] = await runQuery<RoutingPresetRow>(sql, "insertRoutingPreset", [
    preset.id,
    tenant.accountId,
    tenant.namespaceId,
    preset.name,
    ...specParams(preset),
  ]);
  return row!;
}

export function listRoutingPresets(sql: Sql, tenant: TenantIds): Promise<RoutingPresetRow[]> {
  return runQuery<RoutingPresetRow>(sql, "listRoutingPresets", [tenant.namespaceId, tenant.accountId]);
}

export async function findRoutingPreset(sql: Sql, tenant: TenantIds, id: string): Promise<RoutingPresetRow | undefined> {
  return runQueryRow<RoutingPresetRow>(sql, "findRoutingPreset", [id, tenant.namespaceId, tenant.accountId]);
}

/** The namespace's preset of that name, disabled or not (request-time resolution). */
export async function findRoutingPresetByName(sql: Sql, namespaceId: string, name: string): Promise<RoutingPresetRow | undefined> {
  return runQueryRow<RoutingPresetRow>(sql, "findRoutingPresetByName", [namespaceId, name]);
}

/** Replaces the whole spec (`name` null = unchanged); undefined when the preset is not the tenant's. */
export async function replaceRoutingPreset(
  sql: Sql,
  tenant: TenantIds,
  id: string,
  name: string | null,
  spec: RoutingPresetSpec,
): Promise<RoutingPresetRow | undefined> {
  return runQueryRow<RoutingPresetRow>(sql, "replaceRoutingPreset", [id, tenant.namespaceId, tenant.accountId, name, ...specParams(spec)]);
}

/** Stamps or clears disabled_at; the row after, or undefined when it is not the tenant's. */
export async function setRoutingPresetDisabled(sql: Sql, tenant: TenantIds, id: string, disabled: boolean): Promise<RoutingPresetRow | undefined> {
  return runQueryRow<RoutingPresetRow>(sql, "setRoutingPresetDisabled", [id, tenant.namespaceId, tenant.accountId, disabled]);
}

/** Deletes a preset; its name, or undefined when it is not the tenant's. */
export async function deleteRoutingPreset(sql: Sql, tenant: TenantIds, id: string): Promise<{ id: string; name: string } | undefined> {
  const [row] = await runQuery<{ id: string; name: string }>(sql, "deleteRoutingPreset", [id, tenant.namespaceId, tenant.accountId]);
  return row;
}
