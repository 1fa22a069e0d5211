import { describe, expect, test } from "bun:test";
import type { ChatCompletionMessage } from "openai/resources/chat/completions";
import type { IrStreamPart } from "../../../src/ir";
import { openaiChatCodec } from "../../../src/protocols/openai-chat";
import { CITED, CITED_ANSWER, CITED_STREAM, INTRO } from "../citation-fixtures";
import { encodeAll, parseEvents, testContext } from "./replay-sse";

const WEB_SEARCH_WARNING = {
  code: "dropped_content",
  field: "output.web_search",
  message: "a web search the provider ran has no place in a chat completion; its citations are carried as annotations",
};

function deltas(text: string): unknown[] {
  return parseEvents(text)
    .filter((event) => event.data !== "[DONE]")
    .map((event) => {
      const chunk = JSON.parse(event.data) as { choices: Array<{ delta: unknown; finish_reason: string | null }> };
      return chunk.choices[0];
    });
}

describe("openai-chat encoders carry citations", () => {
  test("a whole answer's citations are url_citation annotations on the joined content; the search is named as dropped", () => {
    const encoded = openaiChatCodec.encodeResponse(CITED_ANSWER, testContext());
    const message = (encoded.value.choices as Array<{ message: ChatCompletionMessage }>)[0]?.message;
    const annotations: ChatCompletionMessage.Annotation[] = [
      { type: "url_citation", url_citation: { end_index: 30, start_index: 5, title: "Mount Columbia", url: "https://columbia.example/peak" } },
      { type: "url_citation", url_citation: { end_index: 51, start_index: 5, title: "", url: "https://peaks.example/alberta" } },
    ];
    expect(message).toEqual({ role: "assistant", content: INTRO + CITED, annotations } as unknown as ChatCompletionMessage);
    expect(encoded.warnings).toEqual([WEB_SEARCH_WARNING]);
  });

  test("an answer without citations has no annotations field", () => {
    const body = openaiChatCodec.encodeResponse({ content: [{ type: "text", text: "hi" }], finish: { reason: "stop" } }, testContext()).value;
    expect((body.choices as Array<{ message: object }>)[0]?.message).toEqual({ role: "assistant", content: "hi" });
  });

  test("a document citation, which only Messages carries, is dropped with output.citations", () => {
    const response = {
      content: [{ type: "text" as const, text: "per the file", citations: [{ citedText: "x", document: { protocol: "anthropic-messages" as const, raw: { type: "char_location" } } }] }],
      finish: { reason: "stop" as const },
    };
    const encoded = openaiChatCodec.encodeResponse(response, testContext());
    expect((encoded.value.choices as Array<{ message: object }>)[0]?.message).toEqual({ role: "assistant", content: "per the file" });
    expect(encoded.warnings.map((warning) => `${warning.code}:${warning.field}`)).toEqual(["dropped_content:output.citations"]);
  });

  test("a stream sends a spanned citation once its text is sent, and a span-less one when its part ends, as delta.annotations", () => {
    const encoder = openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: false });
    const out = encodeAll(encoder, CITED_STREAM);
    expect(deltas(out)).toEqual([
      { index: 0, delta: { role: "assistant", content: INTRO }, finish_reason: null },
      { index: 0, delta: { content: "Mount Columbia is 3,747 m" }, finish_reason: null },
      { index: 0, delta: { annotations: [{ type: "url_citation", url_citation: { end_index: 30, start_index: 5, title: "Mount Columbia", url: "https://columbia.example/peak" } }] }, finish_reason: null },
      { index: 0, delta: { content: CITED.slice(25) }, finish_reason: null },
      { index: 0, delta: { annotations: [{ type: "url_citation", url_citation: { end_index: 51, start_index: 0, title: "", url: "https://peaks.example/alberta" } }] }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: "stop" },
    ]);
    expect(encoder.warnings).toEqual([WEB_SEARCH_WARNING]);
  });

  test("a citation before its text (as Anthropic sends one) waits for the end of its part; spans are shifted by the text of earlier parts", () => {
    const parts: IrStreamPart[] = [
      { type: "text_delta", text: "Intro. " },
      { type: "reasoning_delta", text: "look it up" },
      { type: "citation", citation: { url: "https://a.example", title: "A", citedText: "the page's words" } },
      { type: "text_delta", text: "Cited." },
      { type: "citation", citation: { url: "https://b.example", start: 0, end: 5 } },
    ];
    const out = encodeAll(openaiChatCodec.createStreamEncoder(testContext(), { includeUsage: false }), parts);
    expect(deltas(out)).toEqual([
      { index: 0, delta: { role: "assistant", content: "Intro. " }, finish_reason: null },
      { index: 0, delta: { reasoning_content: "look it up" }, finish_reason: null },
      { index: 0, delta: { content: "Cited." }, finish_reason: null },
      { index: 0, delta: { annotations: [{ type: "url_citation", url_citation: { end_index: 12, start_index: 7, title: "", url: "https://b.example" } }] }, finish_reason: null },
      { index: 0, delta: { annotations: [{ type: "url_citation", url_citation: { end_index: 13, start_index: 7, title: "A", url: "https://a.example" } }] }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: "stop" },
    ]);
  });
});
