import { describe, expect, test } from "bun:test";
import type { ContentBlock } from "@anthropic-ai/sdk/resources/messages";
import type { IrStreamPart } from "../../../src/ir";
import { anthropicMessagesCodec as codec } from "../../../src/protocols/anthropic-messages";
import { CITED, CITED_ANSWER, CITED_STREAM, INTRO, SPAN_TEXT } from "../citation-fixtures";
import { encodeAll, parseEvents, testContext } from "../openai-chat/replay-sse";

const location = (url: string, title: string | null, cited_text: string) => ({ type: "web_search_result_location", cited_text, url, title, encrypted_index: "" });
const SPANNED = location("https://columbia.example/peak", "Mount Columbia", SPAN_TEXT);
const SEARCH_BLOCKS = [
  { type: "server_tool_use", id: "srvtoolu_ws_abc123", name: "web_search", input: { query: "tallest mountain in Alberta" } },
  {
    type: "web_search_tool_result",
    tool_use_id: "srvtoolu_ws_abc123",
    content: [
      { type: "web_search_result", title: "Mount Columbia", url: "https://columbia.example/peak", encrypted_content: "", page_age: "2 days ago" },
      { type: "web_search_result", title: "", url: "https://peaks.example/alberta", encrypted_content: "", page_age: null },
    ],
  },
];

describe("anthropic-messages encoders carry citations and searches", () => {
  test("a whole answer's search is a server_tool_use and its result, and cited text is split into blocks at the cited spans", () => {
    const encoded = codec.encodeResponse(CITED_ANSWER, testContext());
    const whole = location("https://peaks.example/alberta", null, CITED);
    const content = [
      ...SEARCH_BLOCKS,
      { type: "text", text: INTRO },
      { citations: [SPANNED, whole], type: "text", text: SPAN_TEXT },
      { citations: [whole], type: "text", text: CITED.slice(25) },
    ];
    expect(encoded.value.content).toEqual(content as unknown as ContentBlock[]);
    expect(encoded.value.usage).toEqual({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 1 } });
    expect(encoded.warnings).toEqual([]);
  });

  test("an uncited whitespace piece joins its neighbour; Anthropic's own document citation goes verbatim, another vendor's is dropped", () => {
    const raw = { type: "char_location", cited_text: "x", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 1 };
    const response = {
      content: [
        {
          type: "text" as const,
          text: "A. B.",
          citations: [
            { url: "https://a.example", start: 0, end: 2 },
            { url: "https://b.example", title: "B", start: 3, end: 5, citedText: "page text" },
          ],
        },
        { type: "text" as const, text: "Doc.", citations: [{ document: { protocol: "anthropic-messages" as const, raw } }] },
        { type: "text" as const, text: "Other.", citations: [{ document: { protocol: "google-generate-content" as const, raw: {} } }] },
      ],
      finish: { reason: "stop" as const },
    };
    const encoded = codec.encodeResponse(response, testContext());
    expect(encoded.value.content).toEqual([
      { citations: [location("https://a.example", null, "A.")], type: "text", text: "A. " },
      { citations: [location("https://b.example", "B", "page text")], type: "text", text: "B." },
      { citations: [raw], type: "text", text: "Doc." },
      { type: "text", text: "Other." },
    ] as unknown as ContentBlock[]);
    expect(encoded.warnings.map((warning) => `${warning.code}:${warning.field}`)).toEqual(["dropped_content:output.citations"]);
  });

  test("a stream writes the search blocks whole and each citation as a citations_delta in its text block", () => {
    const encoder = codec.createStreamEncoder(testContext(), { includeUsage: false });
    const events = parseEvents(encodeAll(encoder, CITED_STREAM)).map((event) => JSON.parse(event.data) as Record<string, unknown>);
    const summary = events.map((event) => {
      const delta = event.delta as { type?: string } | undefined;
      const block = event.content_block as { type?: string } | undefined;
      return [event.type, block?.type ?? delta?.type].filter((piece) => piece !== undefined).join(":");
    });
    expect(summary).toEqual([
      "message_start",
      "content_block_start:server_tool_use",
      "content_block_delta:input_json_delta",
      "content_block_stop",
      "content_block_start:web_search_tool_result",
      "content_block_stop",
      "content_block_start:text",
      "content_block_delta:text_delta",
      "content_block_delta:text_delta",
      "content_block_delta:citations_delta",
      "content_block_delta:text_delta",
      "content_block_delta:citations_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events[1]).toEqual({ type: "content_block_start", index: 0, content_block: { ...SEARCH_BLOCKS[0], input: {} } });
    expect(events[2]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"query":"tallest mountain in Alberta"}' } });
    expect(events[4]).toEqual({ type: "content_block_start", index: 1, content_block: SEARCH_BLOCKS[1] });
    // The spanned citation quotes the text it spans; the span-less one, its whole text part.
    expect(events[9]).toEqual({ type: "content_block_delta", index: 2, delta: { type: "citations_delta", citation: SPANNED } });
    expect(events[11]).toEqual({ type: "content_block_delta", index: 2, delta: { type: "citations_delta", citation: location("https://peaks.example/alberta", null, INTRO + CITED) } });
    expect(encoder.warnings).toEqual([]);
  });

  test("a citation that carries its passage, sent ahead of its text as Anthropic does, goes out right after its block opens", () => {
    const parts: IrStreamPart[] = [
      { type: "reasoning_delta", text: "search first" },
      { type: "reasoning_signature", signature: "sig", protocol: "anthropic-messages" },
      { type: "citation", citation: { url: "https://a.example", title: "A", citedText: "the page's words" } },
      { type: "text_delta", text: "Cited." },
    ];
    const encoder = codec.createStreamEncoder(testContext(), { includeUsage: false });
    const events = parseEvents(encodeAll(encoder, parts)).map((event) => JSON.parse(event.data) as Record<string, unknown>);
    expect(events.slice(1, 9).map((event) => [event.type, (event.content_block ?? event.delta) as object])).toEqual([
      ["content_block_start", { type: "thinking", thinking: "" }],
      ["content_block_delta", { type: "thinking_delta", thinking: "search first" }],
      ["content_block_delta", { type: "signature_delta", signature: "sig" }],
      ["content_block_stop", undefined as unknown as object],
      ["content_block_start", { type: "text", text: "" }],
      ["content_block_delta", { type: "citations_delta", citation: location("https://a.example", "A", "the page's words") }],
      ["content_block_delta", { type: "text_delta", text: "Cited." }],
      ["content_block_stop", undefined as unknown as object],
    ]);
    expect(encoder.warnings).toEqual([]);
  });
});
