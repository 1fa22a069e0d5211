import { newId } from "../../ids";
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
} from "../../db/queries/routing-presets";
import { conflict, notFound } from "../../errors/api-error";
import type { Services } from "../../services";
import { isoOrNull } from "../serialize";
import type { Tenant } from "../../identity/tenant";

/** What the routing-preset service uses: the database and this instance's preset cache (to invalidate it). */
export type RoutingPresetServiceDeps = Pick<Services, "db" | "routingPresets">;

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

export async function listPresets(deps: RoutingPresetServiceDeps, tenant: Tenant) {
  return (await listRoutingPresets(deps.db.sql, tenant)).map(routingPresetEnvelope);
}

async function getRow(deps: RoutingPresetServiceDeps, tenant: Tenant, id: string): Promise<RoutingPresetRow> {
  const row = await findRoutingPreset(deps.db.sql, tenant, id);
  if (!row) throw notFound("routing preset");
  return row;
}

export async function getPreset(deps: RoutingPresetServiceDeps, tenant: Tenant, id: string) {
  return routingPresetEnvelope(await getRow(deps, tenant, id));
}

export async function createPreset(deps: RoutingPresetServiceDeps, tenant: Tenant, name: string, spec: RoutingPresetSpec) {
  try {
    const row = await insertRoutingPreset(deps.db.sql, tenant, { id: newId("rp"), name, ...spec });
    // A lookup of this name may have cached "no such preset".
    deps.routingPresets.presetChanged(tenant.namespaceId, name);
    return routingPresetEnvelope(row);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate(name);
    throw error;
  }
}

/** Replaces the whole spec; `name` undefined keeps the name. */
export async function replacePreset(deps: RoutingPresetServiceDeps, tenant: Tenant, id: string, name: string | undefined, spec: RoutingPresetSpec) {
  const before = await getRow(deps, tenant, id);
  let row: RoutingPresetRow | undefined;
  try {
    row = await replaceRoutingPreset(deps.db.sql, tenant, id, name ?? null, spec);
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicate(name!);
    throw error;
  }
  if (!row) throw notFound("routing preset");
  deps.routingPresets.presetChanged(tenant.namespaceId, before.name, row.name);
  return routingPresetEnvelope(row);
}

export async function removePreset(deps: RoutingPresetServiceDeps, tenant: Tenant, id: string): Promise<{ deleted: true }> {
  const removed = await deleteRoutingPreset(deps.db.sql, tenant, id);
  if (!removed) throw notFound("routing preset");
  deps.routingPresets.presetChanged(tenant.namespaceId, removed.name);
  return { deleted: true };
}

/** Idempotent; the envelope after the change. */
export async function setDisabled(deps: RoutingPresetServiceDeps, tenant: Tenant, id: string, disabled: boolean) {
  const row = await setRoutingPresetDisabled(deps.db.sql, tenant, id, disabled);
  if (!row) throw notFound("routing preset");
  deps.routingPresets.presetChanged(tenant.namespaceId, row.name);
  return routingPresetEnvelope(row);
}
