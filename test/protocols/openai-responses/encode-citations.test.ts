import { describe, expect, test } from "bun:test";
import type { ResponseFunctionWebSearch, ResponseOutputText } from "openai/resources/responses/responses";
import { openaiResponsesCodec } from "../../../src/protocols/openai-responses";
import { CITED, CITED_ANSWER, CITED_STREAM, INTRO } from "../citation-fixtures";
import { encodeAll, parseEvents, testContext } from "../openai-chat/replay-sse";

const SEARCH_ITEM: ResponseFunctionWebSearch = {
  id: "ws_abc123",
  type: "web_search_call",
  status: "completed",
  action: {
    type: "search",
    query: "tallest mountain in Alberta",
    queries: ["tallest mountain in Alberta"],
    sources: [
      { type: "url", url: "https://columbia.example/peak" },
      { type: "url", url: "https://peaks.example/alberta" },
    ],
  },
};

describe("openai-responses encoders carry citations and searches", () => {
  test("a whole answer has a web_search_call item in answer order and url_citation annotations on the joined output_text", () => {
    const encoded = openaiResponsesCodec.encodeResponse(CITED_ANSWER, testContext());
    const annotations: ResponseOutputText.URLCitation[] = [
      { type: "url_citation", end_index: 30, start_index: 5, title: "Mount Columbia", url: "https://columbia.example/peak" },
      { type: "url_citation", end_index: 51, start_index: 5, title: "", url: "https://peaks.example/alberta" },
    ];
    expect(encoded.value.output).toEqual([
      SEARCH_ITEM,
      { id: "msg_0", type: "message", status: "completed", content: [{ type: "output_text", annotations, text: INTRO + CITED }], role: "assistant" },
    ]);
    // OpenAI counts searches as items, not in usage.
    expect(encoded.value.usage).toEqual({ input_tokens: 10, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 });
    expect(encoded.warnings).toEqual([]);
  });

  test("a failed search is a failed item; an id that is not a Responses id gets the ws_ prefix", () => {
    const response = { content: [{ type: "web_search" as const, id: "srvtoolu_01", queries: ["q"], results: [], errorCode: "max_uses_exceeded" }], finish: { reason: "stop" as const } };
    expect(openaiResponsesCodec.encodeResponse(response, testContext()).value.output).toEqual([
      { id: "ws_srvtoolu_01", type: "web_search_call", status: "failed", action: { type: "search", query: "q", queries: ["q"] } },
    ]);
  });

  test("a stream writes the search item with OpenAI's events, annotation.added after the cited text, and the annotations in every done event", () => {
    const encoder = openaiResponsesCodec.createStreamEncoder(testContext(), { includeUsage: false });
    const events = parseEvents(encodeAll(encoder, CITED_STREAM)).map((event) => JSON.parse(event.data) as Record<string, unknown>);
    expect(events.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.web_search_call.in_progress",
      "response.web_search_call.searching",
      "response.web_search_call.completed",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.annotation.added",
      "response.output_text.delta",
      "response.output_text.annotation.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events[2]).toEqual({ type: "response.output_item.added", sequence_number: 2, output_index: 0, item: { id: "ws_abc123", type: "web_search_call", status: "in_progress" } });
    expect(events[3]).toEqual({ type: "response.web_search_call.in_progress", sequence_number: 3, item_id: "ws_abc123", output_index: 0 });
    expect(events[6]).toEqual({ type: "response.output_item.done", sequence_number: 6, output_index: 0, item: SEARCH_ITEM });
    const spanned = { type: "url_citation", end_index: 30, start_index: 5, title: "Mount Columbia", url: "https://columbia.example/peak" };
    const whole = { type: "url_citation", end_index: 51, start_index: 0, title: "", url: "https://peaks.example/alberta" };
    expect(events[11]).toEqual({
      type: "response.output_text.annotation.added",
      sequence_number: 11,
      item_id: "msg_0",
      output_index: 1,
      content_index: 0,
      annotation_index: 0,
      annotation: spanned,
    });
    expect(events[13]).toMatchObject({ annotation_index: 1, annotation: whole });
    // As OpenAI's: output_text.done carries no annotations, the part and item after it do.
    expect(events[14]).not.toHaveProperty("annotations");
    const part = { type: "output_text", annotations: [spanned, whole], text: INTRO + CITED };
    expect(events[15]).toMatchObject({ part });
    expect(events[16]).toMatchObject({ item: { content: [part] } });
    expect((events[17]?.response as { output: unknown[] }).output).toEqual([SEARCH_ITEM, { id: "msg_0", type: "message", status: "completed", content: [part], role: "assistant" }]);
    expect(encoder.warnings).toEqual([]);
  });
});
