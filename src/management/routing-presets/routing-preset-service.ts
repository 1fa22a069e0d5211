import type { Caller } from "../../auth/principal";
import { resolveNamespace } from "../../auth/resolve-namespace";
import { newId } from "../../ids";
import type { Sql } from "../../db/connect-database";
import { isUniqueViolation } from "../../db/errors";
import {
  deleteRoutingPreset,
  findRoutingPreset,
  insertRoutingPreset,
  listRoutingPresets,
  replaceRoutingPreset,
  setRoutingPresetDisabled,
  type RoutingPresetRow,
  type RoutingPresetSpec,
  type RoutingPresetTenant,
} from "../../db/queries/routing-presets";
import { conflict, notFound } from "../../errors/api-error";
import type { RoutingPresetStore } from "../../routing/routing-preset-store";
import { isoOrNull } from "../serialize";

/** What the routes need: the database and this instance's preset cache (to invalidate it). */
export interface RoutingPresetDeps {
  sql: Sql;
  store: Pick<RoutingPresetStore, "presetChanged">;
}

/** Resolves `{nsid}` (or `me` on the flat paths) first: another tenant's namespace is a 404 before any 400. */
export async function presetTenant(sql: Sql, caller: Caller, nsid: string): Promise<RoutingPresetTenant> {
  const namespace = await resolveNamespace(sql, caller, nsid);
  return { accountId: caller.accountId, namespaceId: namespace.id };
}

export function routingPresetEnvelope(row: RoutingPresetRow) {
  return {
    id: row.id,
    name: row.name,
    model: row.model,
    system_prompt: row.system_prompt,
    params: row.params,
    routing: row.routing,
    disabled_at: isoOrNull(row.disabled_at),
  };
}

const duplicate = (name: string) => conflict(`a routing preset named "${name}" already exists in this namespace`);

export async function listPresets(deps: RoutingPresetDeps, tenant: RoutingPresetTenant) {
  return (await listRoutingPresets(deps.sql, tenant)).map(routingPresetEnvelope);
}

async function getRow(deps: RoutingPresetDeps, tenant: RoutingPresetTenant, id: string): Promise<RoutingPresetRow> {
  const row = await findRoutingPreset(deps.sql, tenant, id);
  if (!row) throw notFound("routing preset");
  return row;
}

export async function getPreset(deps: RoutingPresetDeps, tenant: RoutingPresetTenant, id: string) {
  return routingPresetEnvelope(await getRow(deps, tenant, id));
}

export async function createPreset(deps: RoutingPresetDeps, tenant: RoutingPresetTenant, name: string, spec: RoutingPresetSpec) {
  try {
    const row = await insertRoutingPreset(deps.sql, tenant, { id: newId("rp"), name, ...spec });
    // A lookup of this name may have cached "no such preset".
    deps.store.presetChanged(tenant.namespaceId, name);
    return routingPresetEnvelope(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate(name);
    throw error;
  }
}

/** Replaces the whole spec; `name` undefined keeps the name. */
export async function replacePreset(deps: RoutingPresetDeps, tenant: RoutingPresetTenant, id: string, name: string | undefined, spec: RoutingPresetSpec) {
  const before = await getRow(deps, tenant, id);
  let row: RoutingPresetRow | undefined;
  try {
    row = await replaceRoutingPreset(deps.sql, tenant, id, name ?? null, spec);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate(name!);
    throw error;
  }
  if (!row) throw notFound("routing preset");
  deps.store.presetChanged(tenant.namespaceId, before.name, row.name);
  return routingPresetEnvelope(row);
}

export async function removePreset(deps: RoutingPresetDeps, tenant: RoutingPresetTenant, id: string): Promise<{ deleted: true }> {
  const removed = await deleteRoutingPreset(deps.sql, tenant, id);
  if (!removed) throw notFound("routing preset");
  deps.store.presetChanged(tenant.namespaceId, removed.name);
  return { deleted: true };
}

/** Idempotent; the envelope after the change. */
export async function setDisabled(deps: RoutingPresetDeps, tenant: RoutingPresetTenant, id: string, disabled: boolean) {
  const row = await setRoutingPresetDisabled(deps.sql, tenant, id, disabled);
  if (!row) throw notFound("routing preset");
  deps.store.presetChanged(tenant.namespaceId, row.name);
  return routingPresetEnvelope(row);
}
