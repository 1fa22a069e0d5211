import { Type } from "@sinclair/typebox";
import type { RoutingPresetSpec } from "../../db/queries/routing-presets";
import { badRequest } from "../../errors/api-error";
import { isRoutingProfile, ModelRefError, parseModelRef, ROUTING_PROFILES } from "../../routing/parse-model-ref";
import { presetParamsProblem, ROUTING_PRESET_NAME } from "../../routing/routing-preset";
import { bodyValidator } from "../validate-body";

const MAX_NAME_LENGTH = 64;
const MAX_SYSTEM_PROMPT_CHARS = 100_000;
const MAX_PROVIDERS = 64;

const Nullable = (schema: ReturnType<typeof Type.String>) => Type.Union([schema, Type.Null()]);

const RoutingSchema = Type.Object(
  {
    only: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: MAX_PROVIDERS })),
    ignore: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: MAX_PROVIDERS })),
    sort: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);

const specFields = {
  model: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
  system_prompt: Type.Optional(Nullable(Type.String({ maxLength: MAX_SYSTEM_PROMPT_CHARS }))),
  params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  routing: Type.Optional(RoutingSchema),
};

const validateCreateShape = bodyValidator(Type.Object({ name: Type.String(), ...specFields }, { additionalProperties: false }));
const validateReplaceShape = bodyValidator(Type.Object({ name: Type.Optional(Type.Union([Type.String(), Type.Null()])), ...specFields }, { additionalProperties: false }));

export const createDoc = validateCreateShape.doc;
export const replaceDoc = validateReplaceShape.doc;

function checkName(name: string): string {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || !ROUTING_PRESET_NAME.test(name)) {
    throw badRequest(`name must be 1 to ${MAX_NAME_LENGTH} characters of A-Z, a-z, 0-9, "_" and "-", starting with a letter or digit`);
  }
  return name;
}

/** The preset's own model: a plain model id; its routing profile belongs in routing.sort. */
function checkModel(model: string | null | undefined): string | null {
  if (model === undefined || model === null) return null;
  const ref = parseModelRef(model);
  if (ref instanceof ModelRefError) throw badRequest(`model: ${ref.message}`);
  if (ref.kind === "preset") throw badRequest("model must be a model id (<provider>/<model>), not another preset");
  if (ref.profile !== undefined) throw badRequest(`model must not carry a ":${ref.profile}" suffix; set routing.sort instead`);
  return ref.modelId;
}

function checkRouting(routing: { only?: string[]; ignore?: string[]; sort?: string | null } | undefined): Record<string, unknown> {
  if (routing === undefined) return {};
  if (routing.only !== undefined && routing.only.length === 0) throw badRequest("routing.only must list at least one provider (an empty allow-list leaves no provider)");
  if (routing.sort !== undefined && routing.sort !== null && !isRoutingProfile(routing.sort)) {
    throw badRequest(`routing.sort must be one of ${ROUTING_PROFILES.join(", ")}`);
  }
  return {
    ...(routing.only !== undefined ? { only: [...new Set(routing.only)] } : {}),
    ...(routing.ignore !== undefined ? { ignore: [...new Set(routing.ignore)] } : {}),
    ...(routing.sort !== undefined && routing.sort !== null ? { sort: routing.sort } : {}),
  };
}

function checkSpec(input: { model?: string | null; system_prompt?: string | null; params?: Record<string, unknown>; routing?: Parameters<typeof checkRouting>[0] }): RoutingPresetSpec {
  const params = input.params ?? {};
  const problem = presetParamsProblem(params);
  if (problem) throw badRequest(problem);
  return {
    model: checkModel(input.model),
    system_prompt: input.system_prompt ?? null,
    params,
    routing: checkRouting(input.routing),
  };
}

/** A create body: its name and the spec to store. Every refusal is a 400 naming the field. */
export function parseCreateBody(body: unknown): { name: string; spec: RoutingPresetSpec } {
  const input = validateCreateShape(body);
  return { name: checkName(input.name), spec: checkSpec(input) };
}

/** A replacement: the whole spec (what is absent becomes null / empty); an absent or null name is unchanged. */
export function parseReplaceBody(body: unknown): { name: string | undefined; spec: RoutingPresetSpec } {
  const input = validateReplaceShape(body);
  return { name: input.name === undefined || input.name === null ? undefined : checkName(input.name), spec: checkSpec(input) };
}
