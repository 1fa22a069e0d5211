import { describe, expect, test } from "bun:test";
import { IrDecodeError } from "../../src/ir";
import { exceedsJsonDepth, MAX_JSON_DEPTH, parseJsonWithinDepth, textMayExceedDepth } from "../../src/protocols/shared/json-depth";
import { parseArgumentsObject } from "../../src/protocols/shared/json-fields";
import { codecFor } from "../../src/translation/codec-registry";
import { decodeClientRequest } from "../../src/translation/translate-request";
import { translateResponse } from "../../src/translation/translate-response";
import { handleTranslationMessage } from "../../src/translation/translation-handler";

const CONTEXT = { requestId: "req_depth", model: "mock/model", created: 1_750_000_000 };
const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("the depth guard", () => {
  test("counts containers: exactly MAX_JSON_DEPTH passes, one more does not", () => {
    expect(exceedsJsonDepth(JSON.parse(deepArray(MAX_JSON_DEPTH)))).toBe(false);
    expect(exceedsJsonDepth(JSON.parse(deepArray(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(exceedsJsonDepth(JSON.parse(deepObject(MAX_JSON_DEPTH)))).toBe(false);
    expect(exceedsJsonDepth(JSON.parse(deepObject(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(exceedsJsonDepth("text")).toBe(false);
    expect(exceedsJsonDepth(null)).toBe(false);
  });

  test("the text's count of containers skips the walk only when it proves the depth: never a deep value let through", () => {
    // Few brackets: cannot be deep. Many: the walk decides, however shallow the value is.
    expect(textMayExceedDepth('{"choices":[{"delta":{"content":"hi"}}]}')).toBe(false);
    expect(textMayExceedDepth(deepArray(MAX_JSON_DEPTH))).toBe(false);
    expect(textMayExceedDepth(deepArray(MAX_JSON_DEPTH + 1))).toBe(true);
    const wide = JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ i })));
    expect(textMayExceedDepth(wide)).toBe(true);
    expect(parseJsonWithinDepth(wide)).toHaveLength(500);
    // Brackets inside strings only overcount.
    expect(textMayExceedDepth(JSON.stringify({ text: "[".repeat(MAX_JSON_DEPTH + 1) }))).toBe(true);
    expect(() => parseJsonWithinDepth(deepObject(MAX_JSON_DEPTH + 1))).toThrow(SyntaxError);
    expect(() => parseJsonWithinDepth(deepArray(MAX_JSON_DEPTH + 1))).toThrow(SyntaxError);
    expect(parseJsonWithinDepth(deepObject(MAX_JSON_DEPTH))).toBeDefined();
  });

  test("walks a million levels without overflowing the stack", () => {
    expect(exceedsJsonDepth(JSON.parse(deepArray(1_000_000)))).toBe(true);
  });

  test("a wide, shallow value is fine", () => {
    const wide = { items: Array.from({ length: 10_000 }, (_, i) => ({ i, tags: [i, { x: [i] }] })) };
    expect(exceedsJsonDepth(wide)).toBe(false);
  });
});

describe("a client body nested too deep is refused before any codec sees it", () => {
  test("decodeClientRequest throws IrDecodeError, inline and through the worker message handler", () => {
    const body = `{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":${deepObject(200_000)}}`;
    expect(() => decodeClientRequest("openai-chat", body)).toThrow(IrDecodeError);
    // Inside the JSON, and beside it (how the pool sends a body).
    for (const answer of [handleTranslationMessage(JSON.stringify({ op: "decode_request", protocol: "openai-chat", body })), handleTranslationMessage(JSON.stringify({ op: "decode_request", protocol: "openai-chat" }), { texts: [body] })]) {
      expect(typeof answer).toBe("string");
      const reply = JSON.parse(answer as string);
      expect(reply.ok).toBe(false);
      expect(reply.decodeError).toContain(`deeper than ${MAX_JSON_DEPTH}`);
    }
  });
});

describe("a hostile upstream's deep JSON is an invalid upstream response, never a stack overflow", () => {
  test("non-streaming: Anthropic tool_use.input 100k deep, translated to OpenAI chat", () => {
    const body = `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"tool_use","id":"t1","name":"f","input":${deepObject(100_000)}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}`;
    expect(() => translateResponse({ upstream: "anthropic-messages", client: "openai-chat", body, context: CONTEXT })).toThrow(IrDecodeError);
  });

  test("non-streaming: Gemini functionCall.args 100k deep", () => {
    const body = `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","args":${deepObject(100_000)}}}]},"finishReason":"STOP"}]}`;
    expect(() => translateResponse({ upstream: "google-generate-content", client: "anthropic-messages", body, context: CONTEXT })).toThrow(IrDecodeError);
  });

  test("streaming: a deep event is an upstream_invalid_response error part, in every protocol's decoder", () => {
    const deep = deepObject(100_000);
    const events: Record<string, { event?: string; data: string }> = {
      "openai-chat": { data: `{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"x":${deep}}}]}` },
      "openai-responses": { event: "response.created", data: `{"type":"response.created","response":${deep}}` },
      "anthropic-messages": { event: "content_block_start", data: `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":${deep}}}` },
      "google-generate-content": { data: `{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":${deep}}}]}}]}` },
    };
    for (const [protocol, event] of Object.entries(events)) {
      const decoder = codecFor(protocol as keyof typeof events & Parameters<typeof codecFor>[0]).createStreamDecoder();
      const parts = decoder.push({ event: event.event, data: event.data } as Parameters<typeof decoder.push>[0]);
      expect(parts.some((part) => part.type === "error" && part.error.kind === "upstream_invalid_response"), protocol).toBe(true);
    }
  });

  test("tool-call argument text nested too deep is not an object to re-encode", () => {
    expect(parseArgumentsObject(deepObject(100_000))).toBeUndefined();
    expect(parseArgumentsObject(deepObject(10))).toEqual(JSON.parse(deepObject(10)));
  });
});
