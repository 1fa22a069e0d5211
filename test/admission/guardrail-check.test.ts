import { describe, expect, test } from "bun:test";
import { isRefusal, NOTHING_HELD, type AdmissionRequest, type Refusal } from "../../src/admission/admission-check";
import { GuardrailCheck, processCpuMs } from "../../src/admission/guardrail-check";
import { requestTexts } from "../../src/admission/request-texts";
import type { IrRequest } from "../../src/ir";
import type { AttemptCandidate } from "../../src/routing/attempt-candidate";
import { bound, effective, request } from "./admission-support";

const check = new GuardrailCheck();

async function judged(input: AdmissionRequest, by: GuardrailCheck = check): Promise<Refusal | "admitted"> {
  const result = await by.admit(input);
  if (isRefusal(result)) return result;
  expect(result).toBe(NOTHING_HELD);
  return "admitted";
}

function refusedBy(result: Refusal | "admitted", policyId: string) {
  expect(result).toMatchObject({ kind: "refusal", status: 403, code: "permission_denied", policy: { policyId } });
}

describe("guardrails, from composed policies to a decision", () => {
  test("deny lists win over allow lists; allow lists intersect", async () => {
    const policy = effective(
      bound("pol_allow_a", "guardrail", { model_allow: ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku", "google/gemini-2.0-flash"] }),
      bound("pol_allow_b", "guardrail", { model_allow: ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku"] }, { type: "namespace", id: "ns_1" }),
      bound("pol_deny", "guardrail", { model_deny: ["anthropic/claude-3-5-haiku"] }),
    );
    expect(await judged(request(policy, { model: "openai/gpt-4o-mini" }))).toBe("admitted");
    refusedBy(await judged(request(policy, { model: "anthropic/claude-3-5-haiku" })), "pol_deny");
    refusedBy(await judged(request(policy, { model: "google/gemini-2.0-flash" })), "pol_allow_b");
    refusedBy(await judged(request(policy, { model: "openai/gpt-4o" })), "pol_allow_a");
  });

  test("a fallback model is judged like the first: a denied or unlisted one refuses the request", async () => {
    const candidates = (...models: string[]) => models.map((modelId) => ({ modelId }) as AttemptCandidate);
    const deny = effective(bound("pol_fallback_deny", "guardrail", { model_deny: ["anthropic/claude-sonnet-4"] }));
    refusedBy(await judged(request(deny, { candidates: candidates("openai/gpt-4o-mini", "anthropic/claude-sonnet-4") })), "pol_fallback_deny");
    const allow = effective(bound("pol_fallback_allow", "guardrail", { model_allow: ["openai/gpt-4o-mini"] }));
    refusedBy(await judged(request(allow, { candidates: candidates("openai/gpt-4o-mini", "google/gemini-2.5-flash") })), "pol_fallback_allow");
    expect(await judged(request(allow, { candidates: candidates("openai/gpt-4o-mini", "openai/gpt-4o-mini") }))).toBe("admitted");
  });

  test("an empty allow list denies every model", async () => {
    const policy = effective(bound("pol_none", "guardrail", { model_allow: [] }));
    refusedBy(await judged(request(policy)), "pol_none");
  });

  test("allow_streaming false refuses stream requests only, and wins over true", async () => {
    const policy = effective(bound("pol_stream_yes", "guardrail", { allow_streaming: true }), bound("pol_stream_no", "guardrail", { allow_streaming: false }));
    expect(await judged(request(policy, { stream: false }))).toBe("admitted");
    const refused = await judged(request(policy, { stream: true }));
    refusedBy(refused, "pol_stream_no");
    expect((refused as Refusal).message).toContain("streaming");
  });

  test("the smallest max_request_tokens applies; a request without max tokens is admitted", async () => {
    const policy = effective(bound("pol_tokens_big", "guardrail", { max_request_tokens: 4_000 }), bound("pol_tokens_small", "guardrail", { max_request_tokens: 1_000 }));
    expect(await judged(request(policy, { maxTokens: 1_000 }))).toBe("admitted");
    expect(await judged(request(policy, { maxTokens: undefined, outputCeiling: 8_192 }))).toBe("admitted");
    refusedBy(await judged(request(policy, { maxTokens: 1_001 })), "pol_tokens_small");
  });

  test("the BYOK rule: required refuses platform funding, forbidden refuses BYOK, both together refuse everything", async () => {
    const required = effective(bound("pol_byok_req", "guardrail", { byok: "required" }));
    refusedBy(await judged(request(required, { funding: "cloud_credit" })), "pol_byok_req");
    expect(await judged(request(required, { funding: "byok" }))).toBe("admitted");
    const forbidden = effective(bound("pol_byok_forb", "guardrail", { byok: "forbidden" }), bound("pol_byok_opt", "guardrail", { byok: "optional" }));
    refusedBy(await judged(request(forbidden, { funding: "byok" })), "pol_byok_forb");
    expect(await judged(request(forbidden, { funding: "cloud_credit" }))).toBe("admitted");
    const conflict = effective(bound("pol_c_req", "guardrail", { byok: "required" }), bound("pol_c_forb", "guardrail", { byok: "forbidden" }));
    refusedBy(await judged(request(conflict, { funding: "cloud_credit" })), "pol_c_req");
    refusedBy(await judged(request(conflict, { funding: "byok" })), "pol_c_forb");
  });

  test("a disabled guardrail is skipped; enabled again, it applies", async () => {
    const disabled = effective(bound("pol_toggle", "guardrail", { model_deny: ["openai/gpt-4o-mini"] }, undefined, true));
    expect(await judged(request(disabled))).toBe("admitted");
    const enabled = effective(bound("pol_toggle", "guardrail", { model_deny: ["openai/gpt-4o-mini"] }));
    refusedBy(await judged(request(enabled)), "pol_toggle");
  });

  const secretive = effective(
    bound("pol_block", "guardrail", {
      content_patterns: [
        { name: "private key", pattern: "-----BEGIN [A-Z ]*PRIVATE KEY-----" },
        { name: "ssn", pattern: "\\b\\d{3}-\\d{2}-\\d{4}\\b", action: "block" },
        { name: "email", pattern: "[a-z]+@example\\.com", action: "redact" },
      ],
    }),
  );
  const base: IrRequest = { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }], params: {}, stream: false };
  const withContent = (ir: IrRequest) => request(secretive, { texts: () => requestTexts(ir) });

  test("block patterns scan the system prompt, message text, reasoning, tool-call arguments and tool results", async () => {
    const leak = "my ssn is 123-45-6789";
    const placements: IrRequest[] = [
      { ...base, system: leak },
      { ...base, messages: [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "text", text: leak }] }] },
      { ...base, messages: [{ role: "assistant", content: [{ type: "reasoning", text: leak }] }] },
      { ...base, messages: [{ role: "assistant", content: [{ type: "tool_call", id: "c1", name: "lookup", arguments: JSON.stringify({ q: leak }) }] }] },
      { ...base, messages: [{ role: "tool", content: [{ type: "tool_result", callId: "c1", output: leak }] }] },
      { ...base, messages: [{ role: "tool", content: [{ type: "tool_result", callId: "c1", output: [{ type: "text", text: leak }] }] }] },
    ];
    for (const ir of placements) {
      const refused = await judged(withContent(ir));
      refusedBy(refused, "pol_block");
      expect((refused as Refusal).message).toContain('"ssn"');
      // The refusal names the pattern, never the text it found.
      expect((refused as Refusal).message).not.toContain("123-45-6789");
    }
    refusedBy(await judged(withContent({ ...base, system: "x\n-----BEGIN RSA PRIVATE KEY-----\nabc" })), "pol_block");
  });

  test("redact patterns and text that does not match do not block a request; images are not scanned", async () => {
    const ir: IrRequest = {
      ...base,
      system: "mail bob@example.com about 123-45-678",
      messages: [{ role: "user", content: [{ type: "image", data: "MTIzLTQ1LTY3ODk=", mediaType: "image/png" }, { type: "text", text: "x123-45-6789" }] }],
    };
    expect(await judged(withContent(ir))).toBe("admitted");
  });

  test("text is read only when a block pattern applies", async () => {
    let reads = 0;
    const texts = () => {
      reads++;
      return ["anything"];
    };
    await judged(request(effective(bound("pol_models", "guardrail", { model_deny: ["x/y"] })), { texts }));
    await judged(request(effective(bound("pol_redact_only", "guardrail", { content_patterns: [{ name: "e", pattern: "e+", action: "redact" }] })), { texts }));
    expect(reads).toBe(0);
    await judged(request(secretive, { texts }));
    expect(reads).toBe(1);
  });

  test("the scan's clock is the process's CPU time: time spent waiting does not count against the deadline", () => {
    const [cpuBefore, wallBefore] = [processCpuMs(), performance.now()];
    Bun.sleepSync(200);
    const [cpu, wall] = [processCpuMs() - cpuBefore, performance.now() - wallBefore];
    expect(wall).toBeGreaterThanOrEqual(199);
    // Only what the process's other threads did meanwhile (GC, I/O): far below the wait.
    expect(cpu).toBeLessThan(100);
  });

  test("a pattern with a slow worst case over a long text fails closed at the deadline; ordinary text is judged in full", async () => {
    const slow = effective(bound("pol_slow", "guardrail", { content_patterns: [{ name: "handle", pattern: "[a-z]+@[a-z]+\\.example" }] }));
    // Quadratic per window: judged in full this takes seconds of CPU, so the 100 ms deadline always ends it.
    const attack = "a".repeat(2_000_000);
    const refused = await judged(request(slow, { texts: () => [attack] }));
    refusedBy(refused, "pol_slow");
    expect((refused as Refusal).message).toContain("in time");
    // Ordinary text of the same size is judged in full (tens of ms): with a deadline no loaded
    // machine reaches, so the assertion is about the verdict, not the speed.
    const patient = new GuardrailCheck({ scanDeadlineMs: 60_000 });
    const prose = "the quick brown fox jumps over the lazy dog. ".repeat(2_000_000 / 45);
    expect(await judged(request(slow, { texts: () => [prose] }), patient)).toBe("admitted");
    // A match far into a long text is found.
    refusedBy(await judged(request(slow, { texts: () => [prose + " mail me at bob@corp.example"] }), patient), "pol_slow");
  });

  test("a short prompt is scanned without reading the clock (a system call); a long one reads it every few windows", async () => {
    let reads = 0;
    const counting = new GuardrailCheck({ now: () => (reads++, processCpuMs()) });
    const policy = effective(bound("pol_clock", "guardrail", { content_patterns: [{ name: "card", pattern: "\\b\\d{16}\\b" }] }));
    expect(await judged(request(policy, { texts: () => ["Say hello to the benchmark."] }), counting)).toBe("admitted");
    expect(reads).toBe(0);
    expect(await judged(request(policy, { texts: () => ["word ".repeat(20_000)] }), counting)).toBe("admitted");
    expect(reads).toBeGreaterThan(1);
  });
});
