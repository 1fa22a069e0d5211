import { describe, expect, test } from "bun:test";
import { REDACTED } from "../../src/admission/redact-stream";
import { guardResponse, ResponseGuard } from "../../src/admission/response-guard";
import type { IrResponse, IrStreamPart } from "../../src/ir";
import { bound, effective } from "./admission-support";

const guardrail = effective(
  bound("pol_answers", "guardrail", {
    content_patterns: [
      { name: "email", pattern: "[a-z]+@example\\.com", action: "redact" },
      { name: "leak", pattern: "TOP-SECRET-\\d+", action: "block" },
    ],
  }),
).guardrail;

function run(guard: ResponseGuard, parts: IrStreamPart[]) {
  const out: IrStreamPart[] = [];
  for (const part of parts) {
    const guarded = guard.onPart(part);
    out.push(...guarded.parts);
    if (guarded.refusal) return { out, refusal: guarded.refusal };
  }
  out.push(...guard.flush().parts);
  return { out, refusal: undefined };
}

const joined = (parts: IrStreamPart[], type: "text_delta" | "reasoning_delta") =>
  parts.map((part) => (part.type === type ? part.text : "")).join("");

describe("the response guard over stream parts", () => {
  test("no content pattern: no guard at all", () => {
    expect(ResponseGuard.for(null)).toBeNull();
    expect(ResponseGuard.for(effective(bound("pol_plain", "guardrail", { max_request_tokens: 5 })).guardrail)).toBeNull();
  });

  test("a citation amid the text passes through without ending the run, so a match split around it is still redacted", () => {
    const citation = { url: "https://example.org/a", start: 0, end: 5 };
    const { out } = run(ResponseGuard.for(guardrail)!, [
      { type: "text_delta", text: "write to al" },
      { type: "citation", citation },
      { type: "text_delta", text: "ice@example.com" },
      { type: "web_search", search: { type: "web_search", id: "ws_1", queries: ["bob@example.com"], results: [] } },
      { type: "finish", finish: { reason: "stop" } },
    ]);
    expect(joined(out, "text_delta")).toBe(`write to ${REDACTED}`);
    expect(out.find((p) => p.type === "citation")).toEqual({ type: "citation", citation });
    // A search's queries are not the model's answer text: the part is passed on as it is, after the text.
    const order = out.map((p) => p.type);
    expect(order.lastIndexOf("text_delta")).toBeLessThan(order.indexOf("web_search"));
    expect(out.find((p) => p.type === "web_search")).toMatchObject({ search: { queries: ["bob@example.com"] } });
  });

  test("text and reasoning are redacted across deltas, and held text goes out before the next part", () => {
    const { out, refusal } = run(ResponseGuard.for(guardrail)!, [
      { type: "start", id: "r1" },
      { type: "reasoning_delta", text: "ask bob@exa" },
      { type: "reasoning_delta", text: "mple.com first" },
      // Nothing here can start a match: it could go out at once, but not before the held reasoning.
      { type: "text_delta", text: "1. " },
      { type: "text_delta", text: "write to al" },
      { type: "text_delta", text: "ice@example.c" },
      { type: "text_delta", text: "om" },
      { type: "tool_call_start", index: 0, id: "c1", name: "send" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"to":"alice@example.com"}' },
      { type: "tool_call_end", index: 0 },
      { type: "finish", finish: { reason: "tool_calls" } },
    ]);
    expect(refusal).toBeUndefined();
    expect(joined(out, "reasoning_delta")).toBe(`ask ${REDACTED} first`);
    expect(joined(out, "text_delta")).toBe(`1. write to ${REDACTED}`);
    // Tool-call arguments are only checked against block patterns: the JSON stays intact.
    expect(out.filter((p) => p.type === "tool_call_delta").map((p) => (p as { argumentsDelta: string }).argumentsDelta).join("")).toBe('{"to":"alice@example.com"}');
    const order = out.map((p) => p.type);
    // Held reasoning goes out before the text that follows it; held text before the tool call.
    expect(order.lastIndexOf("reasoning_delta")).toBeLessThan(order.indexOf("text_delta"));
    expect(order.lastIndexOf("text_delta")).toBeLessThan(order.indexOf("tool_call_start"));
    expect(order.at(-1)).toBe("finish");
  });

  test("a block pattern split across deltas stops the answer before the match", () => {
    const { out, refusal } = run(ResponseGuard.for(guardrail)!, [
      { type: "text_delta", text: "the code is TOP-SEC" },
      { type: "text_delta", text: "RET-42 and more" },
      { type: "finish", finish: { reason: "stop" } },
    ]);
    expect(refusal).toMatchObject({ status: 403, code: "permission_denied", policy: { policyId: "pol_answers" } });
    expect(joined(out, "text_delta")).toBe("the code is ");
    expect(out.some((p) => p.type === "finish")).toBe(false);
  });

  test("a block pattern in tool-call arguments stops the answer", () => {
    const { refusal } = run(ResponseGuard.for(guardrail)!, [
      { type: "tool_call_start", index: 0, id: "c1", name: "send" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"code":"TOP-SECRET-' },
      { type: "tool_call_delta", index: 0, argumentsDelta: '7"}' },
      { type: "tool_call_end", index: 0 },
    ]);
    expect(refusal).toMatchObject({ code: "permission_denied" });
  });

  test("whole answers: redacted, or refused when a block pattern matches", () => {
    const answer: IrResponse = { content: [{ type: "reasoning", text: "x@example.com" }, { type: "text", text: "mail bob@example.com" }], finish: { reason: "stop" } };
    const guarded = guardResponse(guardrail, answer);
    expect(guarded.refusal).toBeUndefined();
    expect(guarded.response.content).toEqual([{ type: "reasoning", text: REDACTED }, { type: "text", text: `mail ${REDACTED}` }]);
    const blocked = guardResponse(guardrail, { content: [{ type: "tool_call", id: "c", name: "f", arguments: '{"a":"TOP-SECRET-1"}' }], finish: { reason: "tool_calls" } });
    expect(blocked.refusal).toMatchObject({ status: 403 });
    expect(guardResponse(null, answer).response).toBe(answer);
  });
});
