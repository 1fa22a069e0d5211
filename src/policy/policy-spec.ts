import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { badRequest } from "../errors/api-error";
import { contentPatternProblem } from "./content-pattern";

/**
 * The spec of each policy kind, as TypeBox schemas, and the validation every write goes
 * through. A spec is stored exactly as validated; the policy store and the composition
 * trust stored specs to have these shapes.
 */
export const POLICY_KINDS = ["budget", "rate_limit", "guardrail", "preset"] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];

export function isPolicyKind(value: unknown): value is PolicyKind {
  return typeof value === "string" && (POLICY_KINDS as readonly string[]).includes(value);
}

/** The longest rate-limit window: 30 days, as long as the longest rolling budget. */
export const MAX_WINDOW_SECS = 30 * 24 * 60 * 60;
/** Content patterns per guardrail: each is scanned over every prompt it applies to. */
export const MAX_CONTENT_PATTERNS = 32;
export const MAX_MODELS_PER_LIST = 1_000;

const PositiveSafeInteger = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const ModelList = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: MAX_MODELS_PER_LIST });

export const BudgetWindowSchema = Type.Union([Type.Literal("day"), Type.Literal("month"), Type.Literal("total")]);
export type BudgetWindow = Static<typeof BudgetWindowSchema>;

export const BudgetSpecSchema = Type.Object(
  { window: BudgetWindowSchema, limit_micro_usd: PositiveSafeInteger },
  { additionalProperties: false },
);
export type BudgetSpec = Static<typeof BudgetSpecSchema>;

export const RateLimitSpecSchema = Type.Object(
  {
    window_secs: Type.Integer({ minimum: 1, maximum: MAX_WINDOW_SECS }),
    max_requests: nullable(PositiveSafeInteger),
    max_tokens: nullable(PositiveSafeInteger),
  },
  { additionalProperties: false },
);
export type RateLimitSpec = Static<typeof RateLimitSpecSchema>;

export const ContentPatternSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    pattern: Type.String({ minLength: 1 }),
    action: Type.Optional(Type.Union([Type.Literal("block"), Type.Literal("redact")])),
  },
  { additionalProperties: false },
);
export type ContentPatternSpec = Static<typeof ContentPatternSchema>;

export const ByokRuleSchema = Type.Union([Type.Literal("required"), Type.Literal("forbidden"), Type.Literal("optional")]);

export const GuardrailSpecSchema = Type.Object(
  {
    model_allow: nullable(ModelList),
    model_deny: nullable(ModelList),
    max_request_tokens: nullable(PositiveSafeInteger),
    allow_streaming: nullable(Type.Boolean()),
    byok: nullable(ByokRuleSchema),
    content_patterns: nullable(Type.Array(ContentPatternSchema, { maxItems: MAX_CONTENT_PATTERNS })),
  },
  { additionalProperties: false },
);
export type GuardrailSpec = Static<typeof GuardrailSpecSchema>;

/** A preset bundles at most one clause of each kind; on input, absent and null both mean none. */
export const PresetSpecSchema = Type.Object(
  { guardrail: nullable(GuardrailSpecSchema), budget: nullable(BudgetSpecSchema), rate_limit: nullable(RateLimitSpecSchema) },
  { additionalProperties: false },
);
const PRESET_CLAUSES: readonly string[] = Object.keys(PresetSpecSchema.properties);

/** A preset as stored: every clause present, null when the preset has none. */
export interface PresetSpec {
  guardrail: GuardrailSpec | null;
  budget: BudgetSpec | null;
  rate_limit: RateLimitSpec | null;
}

export interface PolicySpecByKind {
  budget: BudgetSpec;
  rate_limit: RateLimitSpec;
  guardrail: GuardrailSpec;
  preset: PresetSpec;
}
export type PolicySpec = PolicySpecByKind[PolicyKind];

/** Messages for the rules a client most often trips, by the field's last path segment. */
const FIELD_RULES: Record<string, string> = {
  window: 'must be one of "day", "month", "total"',
  limit_micro_usd: "must be a positive safe integer (micro-USD)",
  window_secs: `must be an integer number of seconds from 1 to ${MAX_WINDOW_SECS}`,
  max_requests: "must be a positive integer or null",
  max_tokens: "must be a positive integer or null",
  max_request_tokens: "must be a positive integer or null",
  allow_streaming: "must be a boolean or null",
  byok: 'must be "required", "forbidden", "optional" or null',
  model_allow: `must be a list of at most ${MAX_MODELS_PER_LIST} model ids (non-empty strings) or null`,
  model_deny: `must be a list of at most ${MAX_MODELS_PER_LIST} model ids (non-empty strings) or null`,
  content_patterns: `must be a list of at most ${MAX_CONTENT_PATTERNS} patterns or null`,
  action: 'must be "block" or "redact"',
};

const compiled = new Map<TSchema, TypeCheck<TSchema>>();
function checker(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) compiled.set(schema, (check = TypeCompiler.Compile(schema)));
  return check;
}

/** Checks `value` against `schema`; a failure is a 400 naming the field, under `prefix`. */
export function checkShape<T extends TSchema>(schema: T, value: unknown, prefix: string): Static<T> {
  const check = checker(schema);
  if (check.Check(value)) return value as Static<T>;
  const first = check.Errors(value).First();
  const segments = (first?.path ?? "").split("/").filter(Boolean);
  const field = [prefix, ...segments].filter(Boolean).join(".") || "body";
  if (first?.message.startsWith("Unexpected property")) throw badRequest(`unknown field: ${field}`);
  if (first?.message.startsWith("Expected required property")) throw badRequest(`${field} is required`);
  // A list item's index is not a rule name: look up the list's own name.
  const named = segments.filter((segment) => !/^\d+$/.test(segment)).at(-1) ?? "";
  const rule = FIELD_RULES[named];
  throw badRequest(`${field} ${rule ?? `is invalid: ${first?.message ?? "unexpected value"}`}`);
}

function validateGuardrail(value: unknown, prefix: string): GuardrailSpec {
  // Each pattern first on its own, so an error names the pattern's field, not the whole list.
  const patterns = (value as { content_patterns?: unknown } | null)?.content_patterns;
  if (Array.isArray(patterns)) patterns.forEach((entry, index) => checkShape(ContentPatternSchema, entry, `${prefix}.content_patterns.${index}`));
  const spec = checkShape(GuardrailSpecSchema, value, prefix);
  spec.content_patterns?.forEach((entry, index) => {
    const problem = contentPatternProblem(entry.pattern);
    if (problem) throw badRequest(`${prefix}.content_patterns.${index}.pattern ${problem}`);
  });
  return spec;
}

function validateRateLimit(value: unknown, prefix: string, requireCap: boolean): RateLimitSpec {
  const spec = checkShape(RateLimitSpecSchema, value, prefix);
  if (requireCap && spec.max_requests == null && spec.max_tokens == null) {
    throw badRequest(`${prefix} needs max_requests or max_tokens`);
  }
  return spec;
}

/**
 * The preset clauses: each validated like its own kind, except that a rate-limit clause
 * must cap something (a plain rate_limit policy with neither cap is accepted, and
 * limits nothing).
 */
export function validatePresetClauses(
  value: { guardrail?: unknown; budget?: unknown; rate_limit?: unknown },
  prefix: string,
): Partial<PresetSpec> {
  const clauses: Partial<PresetSpec> = {};
  const field = (name: string) => (prefix ? `${prefix}.${name}` : name);
  if (value.guardrail != null) clauses.guardrail = validateGuardrail(value.guardrail, field("guardrail"));
  if (value.budget != null) clauses.budget = checkShape(BudgetSpecSchema, value.budget, field("budget"));
  if (value.rate_limit != null) clauses.rate_limit = validateRateLimit(value.rate_limit, field("rate_limit"), true);
  return clauses;
}

/** Validates a spec for `kind` (a 400 naming the field otherwise) and returns it as it is stored. */
export function validatePolicySpec<K extends PolicyKind>(kind: K, value: unknown, prefix?: string): PolicySpecByKind[K];
export function validatePolicySpec(kind: PolicyKind, value: unknown, prefix = "spec"): PolicySpec {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(`${prefix} must be a JSON object`);
  switch (kind) {
    case "budget":
      return checkShape(BudgetSpecSchema, value, prefix);
    case "rate_limit":
      return validateRateLimit(value, prefix, false);
    case "guardrail":
      return validateGuardrail(value, prefix);
    case "preset": {
      // Clause by clause, so an error names the field inside the clause.
      const unknown = Object.keys(value).find((key) => !PRESET_CLAUSES.includes(key));
      if (unknown !== undefined) throw badRequest(`unknown field: ${prefix}.${unknown}`);
      const clauses = validatePresetClauses(value, prefix);
      // Every clause passed its own kind's rules above; the bundle as a whole must match too.
      checkShape(PresetSpecSchema, value, prefix);
      return { guardrail: clauses.guardrail ?? null, budget: clauses.budget ?? null, rate_limit: clauses.rate_limit ?? null };
    }
  }
}
