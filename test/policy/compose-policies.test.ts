import { describe, expect, test } from "bun:test";
import { composePolicies, NO_POLICY } from "../../src/policy/compose-policies";
import { effectivePolicyView } from "../../src/policy/effective-policy-view";
import type { BoundPolicy, PrincipalRef } from "../../src/policy/effective-policy";
import { toPolicyRecord } from "../../src/policy/policy-record";

const ns: PrincipalRef = { type: "namespace", id: "ns_1" };
const key: PrincipalRef = { type: "api_key", id: "k_1" };
let counter = 0;

function bound(kind: string, spec: unknown, principal: PrincipalRef = ns, options: { disabled?: boolean; id?: string } = {}): BoundPolicy {
  const id = options.id ?? `pol_${++counter}`;
  return { policy: toPolicyRecord({ id, name: `${kind} ${id}`, kind, spec, disabled_at: options.disabled ? new Date() : null }), principal };
}

describe("composePolicies", () => {
  test("nothing bound, or only disabled policies, is the shared empty policy", () => {
    expect(composePolicies([])).toBe(NO_POLICY);
    expect(composePolicies([bound("budget", { window: "day", limit_micro_usd: 1 }, ns, { disabled: true })])).toBe(NO_POLICY);
    expect(effectivePolicyView(NO_POLICY)).toEqual({ budgets: [], rate_limits: [], guardrail: null });
  });

  test("every budget and rate-limit clause applies, each with its own counter per policy and principal", () => {
    const shared = bound("budget", { window: "day", limit_micro_usd: 10 }, ns, { id: "pol_shared" });
    const sharedOnKey = bound("budget", { window: "day", limit_micro_usd: 10 }, key, { id: "pol_shared" });
    const month = bound("budget", { window: "month", limit_micro_usd: 100 }, key);
    const fast = bound("rate_limit", { window_secs: 1, max_requests: 2 });
    const slow = bound("rate_limit", { window_secs: 3600, max_tokens: 50_000 }, key);
    const effective = composePolicies([shared, sharedOnKey, month, fast, slow]);
    expect(effective.budgets.map((clause) => clause.spec)).toEqual([
      { window: "day", limit_micro_usd: 10 },
      { window: "day", limit_micro_usd: 10 },
      { window: "month", limit_micro_usd: 100 },
    ]);
    expect(new Set(effective.budgets.map((clause) => clause.counterKey)).size).toBe(3);
    expect(effective.budgets[1]!.source).toEqual({ policyId: "pol_shared", policyName: "budget pol_shared", principal: key });
    expect(effective.rateLimits.map((clause) => clause.spec)).toEqual([{ window_secs: 1, max_requests: 2 }, { window_secs: 3600, max_tokens: 50_000 }]);
    expect(effective.guardrail).toBeNull();
  });

  test("a preset contributes each clause it has; a disabled one contributes nothing", () => {
    const preset = bound("preset", {
      budget: { window: "total", limit_micro_usd: 5 },
      rate_limit: { window_secs: 60, max_requests: 1 },
      guardrail: { allow_streaming: false },
    });
    const effective = composePolicies([preset]);
    expect(effective.budgets.map((c) => c.spec)).toEqual([{ window: "total", limit_micro_usd: 5 }]);
    expect(effective.rateLimits.map((c) => c.spec)).toEqual([{ window_secs: 60, max_requests: 1 }]);
    expect(effective.guardrail?.streamingForbiddenBy?.policyId).toBe(preset.policy.id);
    // The budget and the rate limit of one preset never share a counter.
    expect(effective.budgets[0]!.counterKey).not.toBe(effective.rateLimits[0]!.counterKey);
    expect(composePolicies([bound("preset", { budget: { window: "day", limit_micro_usd: 1 } }, ns, { disabled: true })])).toBe(NO_POLICY);
    // An empty preset is a valid no-op.
    expect(composePolicies([bound("preset", {})])).toBe(NO_POLICY);
  });

  test("allow lists intersect, deny lists union and win, the source of each rule is kept", () => {
    const first = bound("guardrail", { model_allow: ["a", "b", "c"], model_deny: ["x"] });
    const second = bound("guardrail", { model_allow: ["b", "c", "d"], model_deny: ["c"] }, key);
    const effective = composePolicies([first, second]);
    const guardrail = effective.guardrail!;
    expect(guardrail.modelAllowLists.map((list) => [...list.models])).toEqual([["a", "b", "c"], ["b", "c", "d"]]);
    expect([...guardrail.modelDeny.keys()]).toEqual(["x", "c"]);
    expect(guardrail.modelDeny.get("c")!.policyId).toBe(second.policy.id);
    expect(effectivePolicyView(effective).guardrail).toMatchObject({ model_allow: ["b", "c"], model_deny: ["x", "c"] });
  });

  test("an empty allow list denies every model, even intersected with others", () => {
    const view = effectivePolicyView(composePolicies([bound("guardrail", { model_allow: [] }), bound("guardrail", { model_allow: ["a"] })]));
    expect(view.guardrail!.model_allow).toEqual([]);
    // Unset allow lists do not restrict.
    expect(effectivePolicyView(composePolicies([bound("guardrail", { model_allow: null })])).guardrail!.model_allow).toBeNull();
  });

  test("the smallest max_request_tokens wins, and allow_streaming false wins over true", () => {
    const loose = bound("guardrail", { max_request_tokens: 8000, allow_streaming: true });
    const tight = bound("guardrail", { max_request_tokens: 1000, allow_streaming: false }, key);
    const effective = composePolicies([loose, tight, bound("guardrail", { max_request_tokens: 4000 })]);
    expect(effective.guardrail!.maxRequestTokens).toEqual({ value: 1000, source: { policyId: tight.policy.id, policyName: tight.policy.name, principal: key } });
    expect(effective.guardrail!.streamingForbiddenBy!.policyId).toBe(tight.policy.id);
    expect(effectivePolicyView(effective).guardrail).toMatchObject({ max_request_tokens: 1000, allow_streaming: false });
    expect(effectivePolicyView(composePolicies([loose])).guardrail).toMatchObject({ allow_streaming: true });
    expect(effectivePolicyView(composePolicies([bound("guardrail", {})])).guardrail).toMatchObject({ allow_streaming: null, max_request_tokens: null });
  });

  test("byok: required or forbidden wins over optional; required with forbidden is a conflict no request can pass", () => {
    const required = bound("guardrail", { byok: "required" });
    const forbidden = bound("guardrail", { byok: "forbidden" }, key);
    const optional = bound("guardrail", { byok: "optional" });
    expect(composePolicies([optional, required]).guardrail!.byok).toEqual({ rule: "required", sources: [expect.objectContaining({ policyId: required.policy.id })] });
    expect(effectivePolicyView(composePolicies([optional])).guardrail!.byok).toBe("optional");
    expect(effectivePolicyView(composePolicies([optional, forbidden])).guardrail!.byok).toBe("forbidden");
    const conflict = composePolicies([required, optional, forbidden, bound("guardrail", { byok: "required" })]);
    expect(conflict.guardrail!.byok).toMatchObject({ rule: "conflict" });
    const byok = conflict.guardrail!.byok as { required: unknown[]; forbidden: unknown[] };
    expect(byok.required).toHaveLength(2);
    expect(byok.forbidden).toHaveLength(1);
    // Shown as what it does: no model passes.
    expect(effectivePolicyView(conflict).guardrail).toMatchObject({ byok: null, model_allow: [] });
  });

  test("content patterns union, in policy order, compiled, with their action (block by default) and source", () => {
    const first = bound("guardrail", { content_patterns: [{ name: "aws", pattern: "AKIA[0-9A-Z]{16}" }] });
    const second = bound("preset", { guardrail: { content_patterns: [{ name: "card", pattern: "(?i)card:\\s?\\d{16}", action: "redact" }] } }, key);
    const patterns = composePolicies([first, second]).guardrail!.contentPatterns;
    expect(patterns.map((p) => [p.spec.name, p.action, p.source.policyId])).toEqual([
      ["aws", "block", first.policy.id],
      ["card", "redact", second.policy.id],
    ]);
    expect("the key AKIAABCDEFGHIJKLMNOP leaked".replace(patterns[0]!.regex, "[REDACTED]")).toBe("the key [REDACTED] leaked");
    expect("CARD: 4111111111111111".replace(patterns[1]!.regex, "[REDACTED]")).toBe("[REDACTED]");
  });

  test("is pure: composing the same input twice gives equal results and leaves the input untouched", () => {
    const input = [bound("guardrail", { model_deny: ["a"] }), bound("guardrail", { model_deny: ["b"] }), bound("budget", { window: "day", limit_micro_usd: 3 })];
    const snapshot = JSON.stringify(input);
    const one = effectivePolicyView(composePolicies(input));
    const two = effectivePolicyView(composePolicies(input));
    expect(one).toEqual(two);
    expect(JSON.stringify(input)).toBe(snapshot);
  });
});
