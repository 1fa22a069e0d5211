/**
 * Reads the `model` a client sent:
 *   `<vendor>/<model>[:<profile>]`            a catalog model, optionally with a routing profile
 *   `@<preset>[/<vendor>/<model>][:<profile>]` a routing preset, optionally with a base model
 * Only the four profile words make a `:` suffix a routing variant; any other suffix stays
 * part of the id and later fails as an unknown model (404), not here.
 * This function only parses: whether the model or preset exists is the caller's question.
 */

export const ROUTING_PROFILES = ["cost", "latency", "throughput", "balanced"] as const;
export type RoutingProfile = (typeof ROUTING_PROFILES)[number];

export interface ModelIdRef {
  kind: "model";
  modelId: string;
  profile?: RoutingProfile;
}

export interface PresetRef {
  kind: "preset";
  /** The preset name without the `@`. */
  preset: string;
  baseModel?: string;
  profile?: RoutingProfile;
}

export type ModelRef = ModelIdRef | PresetRef;

export type ModelRefErrorReason = "empty" | "too_long" | "invalid_characters" | "invalid_model_id" | "invalid_preset";

/** A `model` value that cannot name anything; callers answer 400 with `message`. */
export class ModelRefError extends Error {
  constructor(
    readonly reason: ModelRefErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "ModelRefError";
  }
}

/** Longer than any real id; keeps garbage out of logs and lookups. */
export const MAX_MODEL_REF_LENGTH = 256;

/** Printable ASCII except space: ids, preset names and profiles never need more. */
const PRINTABLE = /^[!-~]+$/;
const PRESET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export function isRoutingProfile(value: string): value is RoutingProfile {
  return (ROUTING_PROFILES as readonly string[]).includes(value);
}

export function parseModelRef(model: string): ModelRef | ModelRefError {
  if (model === "") return new ModelRefError("empty", "model must not be empty");
  if (model.length > MAX_MODEL_REF_LENGTH) {
    return new ModelRefError("too_long", `model is longer than ${MAX_MODEL_REF_LENGTH} characters`);
  }
  if (!PRINTABLE.test(model)) {
    return new ModelRefError("invalid_characters", `model ${JSON.stringify(model)} contains spaces or non-printable characters`);
  }

  const { body, profile } = splitProfile(model);
  if (body.startsWith("@")) return parsePreset(body, profile, model);

  const invalid = modelIdProblem(body);
  if (invalid !== undefined) return new ModelRefError("invalid_model_id", `model ${JSON.stringify(model)} ${invalid}`);
  return profile === undefined ? { kind: "model", modelId: body } : { kind: "model", modelId: body, profile };
}

/** Strips one trailing `:<profile>` when the word is a profile; `openai/gpt-4.1:floor` is left whole. */
function splitProfile(model: string): { body: string; profile?: RoutingProfile } {
  const colon = model.lastIndexOf(":");
  if (colon === -1) return { body: model };
  const suffix = model.slice(colon + 1);
  return isRoutingProfile(suffix) ? { body: model.slice(0, colon), profile: suffix } : { body: model };
}

function parsePreset(body: string, profile: RoutingProfile | undefined, original: string): PresetRef | ModelRefError {
  const rest = body.slice(1);
  const slash = rest.indexOf("/");
  const preset = slash === -1 ? rest : rest.slice(0, slash);
  if (!PRESET_NAME.test(preset)) {
    return new ModelRefError("invalid_preset", `model ${JSON.stringify(original)} does not name a preset as "@<name>"`);
  }
  const ref: PresetRef = { kind: "preset", preset };
  if (slash !== -1) {
    const baseModel = rest.slice(slash + 1);
    const invalid = modelIdProblem(baseModel);
    if (invalid !== undefined) {
      return new ModelRefError("invalid_model_id", `model ${JSON.stringify(original)}: the base model after "@${preset}/" ${invalid}`);
    }
    ref.baseModel = baseModel;
  }
  if (profile !== undefined) ref.profile = profile;
  return ref;
}

/**
 * Why `id` cannot be a model id, or undefined. A bare `gpt-4.1` is accepted here: it is
 * well-formed, just not in the catalog, and unknown models are a 404.
 */
function modelIdProblem(id: string): string | undefined {
  if (id === "") return "has no model id";
  if (id.startsWith("@")) return "cannot start with \"@\" here";
  if (id.split("/").some((segment) => segment === "")) return "has an empty path segment";
  return undefined;
}
