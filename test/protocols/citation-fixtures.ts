import type { IrCitation, IrResponse, IrStreamPart, IrWebSearchPart } from "../../src/ir";

/**
 * One answer that searched and cites, for every client encoder: a search, then an uncited
 * text part and a cited one. The cited part has a citation of a span (its first 25 code
 * units) and one without (the whole part); the text is not ASCII ("Ü" is 2 UTF-8 bytes, "—"
 * and "’" 3 each), so a wire that counts bytes (Gemini) differs from one that counts code units.
 */
export const INTRO = "Über "; // 5 code units, 6 bytes
export const CITED = "Mount Columbia is 3,747 m — Alberta’s highest."; // 46 code units, 50 bytes
export const SPAN_TEXT = "Mount Columbia is 3,747 m"; // CITED's first 25 code units

export const SEARCH: IrWebSearchPart = {
  type: "web_search",
  id: "ws_abc123",
  queries: ["tallest mountain in Alberta"],
  results: [
    { url: "https://columbia.example/peak", title: "Mount Columbia", pageAge: "2 days ago" },
    { url: "https://peaks.example/alberta" },
  ],
};

export const SPANNED: IrCitation = { url: "https://columbia.example/peak", title: "Mount Columbia", start: 0, end: 25 };
export const WHOLE: IrCitation = { url: "https://peaks.example/alberta" };

export const CITED_ANSWER: IrResponse = {
  content: [SEARCH, { type: "text", text: INTRO }, { type: "text", text: CITED, citations: [SPANNED, WHOLE] }],
  finish: { reason: "stop" },
  usage: { promptTokens: 10, completionTokens: 5, webSearchCount: 1 },
};

/**
 * The same answer streamed, as OpenAI and Gemini order it: the citations after the text
 * they cite. In a stream the text deltas since the search are one text part, so the span
 * is shifted by INTRO and the span-less citation covers INTRO + CITED.
 */
export const CITED_STREAM: IrStreamPart[] = [
  { type: "start", id: "up_1" },
  { type: "web_search", search: SEARCH },
  { type: "text_delta", text: INTRO },
  { type: "text_delta", text: SPAN_TEXT },
  { type: "citation", citation: { ...SPANNED, start: 5, end: 30 } },
  { type: "text_delta", text: CITED.slice(25) },
  { type: "citation", citation: WHOLE },
  { type: "finish", finish: { reason: "stop" } },
];
