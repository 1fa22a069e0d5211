import { irError, type IrError, type IrGenerationParams, type IrRequest, type IrWarning } from "../ir";
import type { Principal } from "../auth/principal";
import type { MeNamespace } from "../identity/me-namespace";
import { ModelRefError, parseModelRef, type PresetRef } from "../routing/parse-model-ref";
import type { PresetTarget, PresetTargets } from "../routing/plan-attempts";
import type { RoutingPreset } from "../routing/routing-preset";
import type { RoutingPresetStore } from "../routing/routing-preset-store";

export interface ResolveDeps {
  presets: Pick<RoutingPresetStore, "find">;
  namespaces: Pick<MeNamespace, "namespaceFor">;
}

export type Resolved =
  /** `targets` undefined: no requested model names a preset (the request is unchanged). `warning` records the preset used. */
  | { ok: true; ir: IrRequest; targets?: PresetTargets; warning?: IrWarning }
  | { ok: false; error: IrError };

const UNCHANGED = (ir: IrRequest): Resolved => ({ ok: true, ir });

/**
 * Stage 3a: every requested model (`model`, or each `models` entry) of the form
 * `@<name>[/<provider>/<model>][:<profile>]` is looked up in the request's namespace.
 * The base model is the one after the name, else the preset's; the profile is the
 * suffix's, else the preset's `routing.sort`, else balanced; the preset's provider
 * lists narrow the model's endpoints (plan-attempts.ts). The first requested model's
 * preset also fills the request: its system prompt when the request has none, and each
 * generation parameter the request left unset. An unknown or disabled preset, or one
 * that names no model when the request names none either, is a 400. A request naming no
 * preset returns at once, with no lookup.
 */
export async function resolvePresets(deps: ResolveDeps, principal: Principal, ir: IrRequest): Promise<Resolved> {
  const requested = ir.models !== undefined && ir.models.length > 0 ? ir.models : [ir.model];
  if (!requested.some((model) => model.startsWith("@"))) return UNCHANGED(ir);
  const namespaceId = await deps.namespaces.namespaceFor(principal);
  const targets = new Map<string, PresetTarget>();
  let primary: RoutingPreset | undefined;
  let first: RoutingPreset | undefined;
  for (const [index, model] of requested.entries()) {
    const ref = parseModelRef(model);
    // A model starting with "@" asks for a preset: one that cannot name any ("@", "@x/", "@:") is the client's mistake.
    if (ref instanceof ModelRefError) {
      if (model.startsWith("@")) return refuse(ref.message);
      // Other malformed refs and plain model ids are the planner's to judge.
    } else if (ref.kind === "preset") {
      const preset = namespaceId === null ? null : await deps.presets.find(namespaceId, ref.preset);
      if (preset === null || preset.disabled) return refuse(`unknown or disabled routing preset "@${ref.preset}"`);
      const target = targetOf(ref, preset);
      if (typeof target === "string") return refuse(target);
      targets.set(model, target);
      first ??= preset;
      if (index === 0) primary = preset;
    }
  }
  const named = primary ?? first;
  if (named === undefined) return UNCHANGED(ir);
  const resolvedIr = primary ? applyDefaults(ir, primary) : ir;
  return {
    ok: true,
    ir: resolvedIr,
    targets,
    warning: { code: "routing_preset", field: named.name, message: `resolved through routing preset "@${named.name}" (${named.id})` },
  };
}

function refuse(message: string): Resolved {
  return { ok: false, error: irError("invalid_request", message) };
}

/** What one `@preset` entry resolves to, or why it cannot resolve. */
function targetOf(ref: PresetRef, preset: RoutingPreset): PresetTarget | string {
  const modelId = ref.baseModel ?? preset.model;
  if (modelId === null) return `routing preset "@${preset.name}" names no model: ask for "@${preset.name}/<provider>/<model>"`;
  return {
    modelId,
    profile: ref.profile ?? preset.sort ?? "balanced",
    presetName: preset.name,
    ...(preset.only ? { only: preset.only } : {}),
    ...(preset.ignore ? { ignore: preset.ignore } : {}),
  };
}

/** The preset's system prompt when the request has none; its parameters where the request set nothing. */
function applyDefaults(ir: IrRequest, preset: RoutingPreset): IrRequest {
  const params: IrGenerationParams = { ...ir.params };
  let changed = false;
  for (const [key, value] of Object.entries(preset.params) as Array<[keyof IrGenerationParams, never]>) {
    if (params[key] === undefined) {
      params[key] = value;
      changed = true;
    }
  }
  const system = ir.system === undefined || ir.system === "" ? (preset.systemPrompt ?? ir.system) : ir.system;
  if (!changed && system === ir.system) return ir;
  return { ...ir, params, ...(system === undefined ? {} : { system }) };
}
