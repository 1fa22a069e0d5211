import type { IrGenerationParams, IrReasoningEffort } from "../ir";
import { isRoutingProfile, type RoutingProfile } from "./parse-model-ref";

/** A routing preset as request-time resolution uses it (src/pipeline/resolve-presets.ts). */
export interface RoutingPreset {
  id: string;
  name: string;
  /** Canonical model id, or null when every request must name its own (`@name/<provider>/<model>`). */
  model: string | null;
  systemPrompt: string | null;
  /** Generation defaults, applied only where the request set nothing. */
  params: IrGenerationParams;
  sort?: RoutingProfile;
  /** Provider allow-list: only these may serve. */
  only?: readonly string[];
  /** Provider deny-list. */
  ignore?: readonly string[];
  disabled: boolean;
}

/**
 * A preset name: what follows `@` in a model, so no `/`, `:` or `.`, and starting with a
 * letter or digit as parseModelRef requires (a preset named "__proto__" or "-x" could
 * never be asked for).
 */
export const ROUTING_PRESET_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Keys of `params` a request body already carries for its own purpose: a default for them means nothing. */
export const RESERVED_PARAM_KEYS: readonly string[] = ["model", "messages", "stream"];

const REASONING_EFFORTS: readonly IrReasoningEffort[] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

type ParamRule = { field: keyof IrGenerationParams; problem(value: unknown): string | undefined; convert?(value: unknown): unknown };

const number = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? undefined : "must be a number");
const nonNegativeInteger = (value: unknown) => (Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : "must be a non-negative integer");
const integer = (value: unknown) => (Number.isSafeInteger(value) ? undefined : "must be an integer");

/**
 * The generation parameters a preset may default, by their wire names (the OpenAI chat
 * vocabulary every protocol's decoder maps into the same fields). A Map: the keys come
 * from clients, and `constructor` or `__proto__` must find nothing, not Object.prototype's.
 */
const PARAM_RULES: ReadonlyMap<string, ParamRule> = new Map(Object.entries({
  max_tokens: { field: "maxTokens", problem: (v) => (Number.isSafeInteger(v) && (v as number) > 0 ? undefined : "must be a positive integer") },
  temperature: { field: "temperature", problem: number },
  top_p: { field: "topP", problem: number },
  top_k: { field: "topK", problem: nonNegativeInteger },
  seed: { field: "seed", problem: integer },
  presence_penalty: { field: "presencePenalty", problem: number },
  frequency_penalty: { field: "frequencyPenalty", problem: number },
  stop: {
    field: "stop",
    problem: (v) =>
      typeof v === "string" || (Array.isArray(v) && v.length > 0 && v.every((item) => typeof item === "string")) ? undefined : "must be a string or a non-empty array of strings",
    convert: (v) => (typeof v === "string" ? [v] : v),
  },
  reasoning_effort: {
    field: "reasoningEffort",
    problem: (v) => (REASONING_EFFORTS.includes(v as IrReasoningEffort) ? undefined : `must be one of ${REASONING_EFFORTS.join(", ")}`),
  },
} satisfies Record<string, ParamRule>));

export const PRESET_PARAM_KEYS: readonly string[] = [...PARAM_RULES.keys()];

/** Why `params` cannot be stored, naming the key (`params.temperature must be a number`), or undefined. */
export function presetParamsProblem(params: Record<string, unknown>): string | undefined {
  for (const [key, value] of Object.entries(params)) {
    if (RESERVED_PARAM_KEYS.includes(key)) return `params.${key} is not allowed: a preset cannot set the request's ${key}`;
    const rule = PARAM_RULES.get(key);
    if (!rule) return `params.${key} is not a generation parameter a preset can set (one of ${PRESET_PARAM_KEYS.join(", ")})`;
    const problem = rule.problem(value);
    if (problem) return `params.${key} ${problem}`;
  }
  return undefined;
}

/** Stored (already validated) `params` as IR generation parameters. */
export function presetParamsToIr(params: Record<string, unknown>): IrGenerationParams {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    const rule = PARAM_RULES.get(key);
    if (rule) result[rule.field] = rule.convert ? rule.convert(value) : value;
  }
  return result as IrGenerationParams;
}

/** A stored routing object (already validated) as the resolution reads it. */
export function presetRouting(routing: Record<string, unknown>): Pick<RoutingPreset, "sort" | "only" | "ignore"> {
  const sort = typeof routing.sort === "string" && isRoutingProfile(routing.sort) ? routing.sort : undefined;
  const list = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : undefined);
  const only = list(routing.only);
  const ignore = list(routing.ignore);
  return { ...(sort ? { sort } : {}), ...(only ? { only } : {}), ...(ignore ? { ignore } : {}) };
}
