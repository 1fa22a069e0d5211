import { describe, expect, test } from "bun:test";
import type { GroundingMetadata } from "@google/genai";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { CITED, CITED_ANSWER, CITED_STREAM, INTRO, SPAN_TEXT } from "../citation-fixtures";
import { encodeAll, parseEvents, testContext } from "../openai-chat/replay-sse";

const CHUNKS: GroundingMetadata["groundingChunks"] = [
  { web: { uri: "https://columbia.example/peak", title: "Mount Columbia" } },
  { web: { uri: "https://peaks.example/alberta" } },
];

describe("google-generate-content encoders carry citations and searches as grounding", () => {
  test("a whole answer's grounding has a chunk per URL, supports with UTF-8 byte segments of the joined text, and the queries", () => {
    const encoded = codec.encodeResponse(CITED_ANSWER, testContext());
    const candidate = (encoded.value.candidates as Array<Record<string, unknown>>)[0];
    expect(candidate?.content).toEqual({ role: "model", parts: [{ text: INTRO }, { text: CITED }] });
    const grounding: GroundingMetadata = {
      groundingChunks: CHUNKS,
      // "Über " is 6 bytes; CITED is 50 ("—" and "’" are 3 bytes each).
      groundingSupports: [
        { segment: { startIndex: 6, endIndex: 31, text: SPAN_TEXT }, groundingChunkIndices: [0] },
        { segment: { startIndex: 6, endIndex: 56, text: CITED }, groundingChunkIndices: [1] },
      ],
      webSearchQueries: ["tallest mountain in Alberta"],
    };
    expect(candidate?.groundingMetadata).toEqual(grounding);
    expect(encoded.warnings).toEqual([]);
  });

  test("citations of one span share a support, a page cited twice is one chunk, and an answer without any has no grounding", () => {
    const text = "ÅÅ cited";
    const response = {
      content: [
        {
          type: "text" as const,
          text,
          citations: [
            { url: "https://a.example", start: 3, end: 8 },
            { url: "https://b.example", start: 3, end: 8 },
            { url: "https://a.example", start: 0, end: 2 },
          ],
        },
      ],
      finish: { reason: "stop" as const },
    };
    const candidate = (codec.encodeResponse(response, testContext()).value.candidates as Array<Record<string, unknown>>)[0];
    expect(candidate?.groundingMetadata).toEqual({
      groundingChunks: [{ web: { uri: "https://a.example" } }, { web: { uri: "https://b.example" } }],
      groundingSupports: [
        { segment: { startIndex: 5, endIndex: 10, text: "cited" }, groundingChunkIndices: [0, 1] },
        { segment: { startIndex: 0, endIndex: 4, text: "ÅÅ" }, groundingChunkIndices: [0] },
      ],
    });
    const plain = (codec.encodeResponse({ content: [{ type: "text", text: "x" }], finish: { reason: "stop" } }, testContext()).value.candidates as Array<object>)[0];
    expect(plain).not.toHaveProperty("groundingMetadata");
  });

  test("a stream sends its grounding on the final chunk, with the finish reason, as Gemini does", () => {
    const encoder = codec.createStreamEncoder(testContext(), { includeUsage: false });
    const chunks = parseEvents(encodeAll(encoder, CITED_STREAM)).map((event) => JSON.parse(event.data) as { candidates: Array<Record<string, unknown>> });
    expect(chunks.map((chunk) => chunk.candidates[0]?.content)).toEqual([
      { role: "model", parts: [{ text: INTRO }] },
      { role: "model", parts: [{ text: SPAN_TEXT }] },
      { role: "model", parts: [{ text: CITED.slice(25) }] },
      { role: "model", parts: [] },
    ]);
    expect(chunks.slice(0, 3).some((chunk) => "groundingMetadata" in (chunk.candidates[0] ?? {}))).toBe(false);
    const last = chunks[3]?.candidates[0];
    expect(last?.finishReason).toBe("STOP");
    expect(last?.groundingMetadata).toEqual({
      groundingChunks: CHUNKS,
      // In the stream the citations index one text part, INTRO + CITED: the span-less one covers all 56 bytes.
      groundingSupports: [
        { segment: { startIndex: 6, endIndex: 31, text: SPAN_TEXT }, groundingChunkIndices: [0] },
        { segment: { startIndex: 0, endIndex: 56, text: INTRO + CITED }, groundingChunkIndices: [1] },
      ],
      webSearchQueries: ["tallest mountain in Alberta"],
    });
    expect(encoder.warnings).toEqual([]);
  });
});
