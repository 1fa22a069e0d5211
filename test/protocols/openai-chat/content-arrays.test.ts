/**
 * Answers whose `content` is an array of typed parts (Mistral's reasoning models), read
 * from recordings of magistral-medium-2507 and mistral-large-4 (test/fixtures/openai-chat/
 * SOURCES.md): thinking parts are reasoning, text parts are text, and any other part type
 * is dropped with a warning that names it.
 */
import { describe, expect, test } from "bun:test";
import type { IrStreamPart } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";
import { translateResponse } from "../../../src/translation/translate-response";
import { StreamTranslation } from "../../../src/translation/stream-translation";
import { REPLAY_SEEDS, splitAtRandom } from "../../support/split-chunks";
import { collect, decodePieces, readFixture, readJsonFixture, types } from "./replay-sse";

const MAGISTRAL_THINKING = "The user is asking for 2+2. This is basic arithmetic. 2+2=4.";
const CONTEXT = { requestId: "req_content_arrays", model: "mistral/magistral-medium", created: 1769088912 };

function replay(name: string): IrStreamPart[] {
  const text = readFixture("openai-chat", name);
  const whole = decodePieces(openaiChatCodec.createStreamDecoder(), [text]);
  for (const seed of REPLAY_SEEDS) expect(decodePieces(openaiChatCodec.createStreamDecoder(), splitAtRandom(text, seed))).toEqual(whole);
  return whole;
}

describe("Mistral content arrays, recorded", () => {
  test("a streamed answer's thinking parts are reasoning deltas and its text parts text deltas, in order", () => {
    const parts = replay("stream-mistral-thinking.sse");
    expect(types(parts)).toEqual(["start", "reasoning_delta", "reasoning_delta", "text_delta", "finish", "usage"]);
    expect(collect(parts)).toMatchObject({ reasoning: MAGISTRAL_THINKING, text: "2 + 2 = 4" });
  });

  test("a whole answer keeps its thinking as reasoning before its text", () => {
    const response = openaiChatCodec.decodeResponse(readJsonFixture("openai-chat", "response-mistral-thinking.json"));
    expect(response.content).toEqual([
      { type: "reasoning", text: MAGISTRAL_THINKING },
      { type: "text", text: "2 + 2 = 4" },
    ]);
    expect(response.warnings).toBeUndefined();
  });

  test("mistral-large-4's thinking part (closed: true) reads the same, with nothing dropped", () => {
    const response = openaiChatCodec.decodeResponse(readJsonFixture("openai-chat", "response-mistral-large-thinking.json"));
    expect(response.content.map((part) => part.type)).toEqual(["reasoning", "text"]);
    expect(response.content[0]).toMatchObject({ type: "reasoning", text: expect.stringContaining("So there are 3 r's in \"strawberry\".") });
    expect(response.content[1]).toEqual({ type: "text", text: "3" });
    expect(response.warnings).toBeUndefined();
  });

  test("a Responses client of a Mistral stream gets the reasoning and the text; nothing is reported dropped", () => {
    const translation = new StreamTranslation({ sessionId: "s", upstream: "openai-chat", client: "openai-responses", context: CONTEXT, clientAskedUsage: false, passthrough: false });
    const outputs = [translation.push(readFixture("openai-chat", "stream-mistral-thinking.sse")), translation.end()];
    const out = outputs.map((output) => output.out).join("");
    expect(out).toContain("event: response.reasoning_text.delta");
    expect(out).toContain(`"type":"reasoning_text","text":${JSON.stringify(MAGISTRAL_THINKING)}`);
    expect(out).toContain('"delta":"2 + 2 = 4"');
    expect(outputs.some((output) => "warnings" in output)).toBe(false);
  });
});

describe("a content part the IR has no place for is dropped by name, never silently", () => {
  const withReference = {
    id: "x",
    model: "mistral-medium",
    choices: [
      {
        index: 0,
        finish_reason: "stop",
        message: {
          role: "assistant",
          content: [
            { type: "text", text: "Paris is the capital" },
            { type: "reference", reference_ids: [0] },
            { type: "text", text: " of France." },
            { type: "reference", reference_ids: [1] },
          ],
        },
      },
    ],
  };

  test("the response decoder reads the text around it and names the part once", () => {
    const response = openaiChatCodec.decodeResponse(withReference);
    expect(response.content).toEqual([{ type: "text", text: "Paris is the capital of France." }]);
    expect(response.warnings).toEqual([{ code: "dropped_content", field: "output.reference", message: 'the upstream\'s "reference" content part has no place in the answer; dropped' }]);
  });

  test("the warning reaches the client's warnings through a translation", () => {
    const translated = translateResponse({ upstream: "openai-chat", client: "anthropic-messages", body: JSON.stringify(withReference), context: CONTEXT });
    expect(translated.warnings).toContainEqual(expect.objectContaining({ code: "dropped_content", field: "output.reference" }));
  });

  test("a stream decoder names it in its warnings on the delta that carried it, once", () => {
    const frame = (content: unknown) => `data: ${JSON.stringify({ id: "x", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    const translation = new StreamTranslation({ sessionId: "s", upstream: "openai-chat", client: "openai-chat", context: CONTEXT, clientAskedUsage: false, passthrough: false });
    const first = translation.push(frame([{ type: "text", text: "Paris" }]));
    const second = translation.push(frame([{ type: "reference", reference_ids: [0] }, { type: "image_url", image_url: { url: "https://x" } }]));
    const third = translation.push(frame([{ type: "reference", reference_ids: [1] }]));
    expect("warnings" in first).toBe(false);
    expect(second.warnings?.map((warning) => warning.field)).toEqual(["output.reference", "output.image_url"]);
    expect("warnings" in third).toBe(false);
    expect(first.out).toContain('"content":"Paris"');
  });

  test("a same-protocol passthrough relays the part as it is, so it reports nothing", () => {
    const translated = translateResponse({ upstream: "openai-chat", client: "openai-chat", body: JSON.stringify(withReference), context: CONTEXT });
    expect(translated.warnings).toEqual([]);
  });
});
