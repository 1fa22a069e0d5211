import type { BudgetSpec, ContentPatternSpec, PolicyKind, PolicySpecByKind, RateLimitSpec } from "./policy-spec";

/**
 * The types the policy engine hands to the enforcement stage: what a request's
 * principals are, the policies bound to them, and the effective policy those compose
 * into. Types only.
 */

export const PRINCIPAL_TYPES = ["namespace", "api_key", "oauth_token", "oauth_client"] as const;
export type PrincipalType = (typeof PRINCIPAL_TYPES)[number];

export function isPrincipalType(value: unknown): value is PrincipalType {
  return typeof value === "string" && (PRINCIPAL_TYPES as readonly string[]).includes(value);
}

/** One principal a policy can be bound to. */
export interface PrincipalRef {
  type: PrincipalType;
  id: string;
}

/** A policy as the engine sees it, spec typed by kind; content patterns come compiled. */
export type PolicyRecord = {
  [K in PolicyKind]: {
    id: string;
    name: string;
    kind: K;
    spec: PolicySpecByKind[K];
    disabled: boolean;
    /** The spec's content patterns (a guardrail's, or a preset's guardrail clause's), compiled, in order. */
    compiledPatterns: readonly RegExp[];
  };
}[PolicyKind];

/** A policy reached through one binding: the same policy bound to two principals of a request is two bound policies. */
export interface BoundPolicy {
  policy: PolicyRecord;
  principal: PrincipalRef;
}

/** Which policy, bound to which principal, a clause or a guardrail rule comes from: what a refusal names. */
export interface PolicySource {
  policyId: string;
  policyName: string;
  principal: PrincipalRef;
}

/**
 * A budget that must have room. `counterKey` names the counter it is held against:
 * one per (policy, principal, clause kind), so a policy bound to three keys caps each
 * key on its own, and a preset's budget does not share a counter with anything else.
 */
export interface BudgetClause {
  spec: BudgetSpec;
  source: PolicySource;
  counterKey: string;
}

export interface RateLimitClause {
  spec: RateLimitSpec;
  source: PolicySource;
  counterKey: string;
}

export interface ContentPatternClause {
  spec: ContentPatternSpec;
  action: "block" | "redact";
  regex: RegExp;
  source: PolicySource;
}

/** The BYOK rule after composition: "conflict" when one policy requires BYOK and another forbids it. */
export type EffectiveByok =
  | { rule: "required" | "forbidden"; sources: PolicySource[] }
  | { rule: "conflict"; required: PolicySource[]; forbidden: PolicySource[] };

/**
 * Every guardrail of the request, most-restrictive-wins. A request passes when its
 * resolved base model is in no deny list and in every allow list, its max_tokens (when
 * set) is at most `maxRequestTokens`, it does not stream when streaming is forbidden,
 * its funding satisfies `byok`, and no block pattern matches.
 */
export interface EffectiveGuardrail {
  /** Each allow list on its own (a model must be in all of them: their intersection). */
  modelAllowLists: { models: ReadonlySet<string>; source: PolicySource }[];
  /** The union of the deny lists, each model with the first policy that denies it. */
  modelDeny: ReadonlyMap<string, PolicySource>;
  maxRequestTokens: { value: number; source: PolicySource } | null;
  /** Set when some guardrail says allow_streaming: false. */
  streamingForbiddenBy: PolicySource | null;
  /** True when some guardrail says allow_streaming: true and none forbids it. */
  streamingAllowedExplicitly: boolean;
  byok: EffectiveByok | null;
  /** True when some guardrail says byok: "optional" (the default, stated). */
  byokOptionalExplicitly: boolean;
  /** The union of every content pattern, in policy order. */
  contentPatterns: ContentPatternClause[];
}

export interface EffectivePolicy {
  budgets: BudgetClause[];
  rateLimits: RateLimitClause[];
  /** Null when no enabled guardrail (or preset guardrail clause) applies. */
  guardrail: EffectiveGuardrail | null;
}
