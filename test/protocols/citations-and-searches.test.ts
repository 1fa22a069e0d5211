/**
 * The decoders read what a provider's answer cites and searched into the IR: citations on
 * the text they support (spans as JavaScript indices into that text part) and web searches
 * in answer order, from recorded answers of each upstream wire. A stream gives the same
 * citations and searches as its parts, the same however its bytes are cut.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { IrCitation, IrContentPart, IrStreamPart, ProtocolId } from "../../src/ir";
import { codecFor } from "../../src/translation/codec-registry";
import { indexOfByte, utf8Length } from "../../src/protocols/google-generate-content/decode-grounding";
import { REPLAY_SEEDS, splitAtRandom } from "../support/split-chunks";
import { decodePieces } from "./openai-chat/replay-sse";

const RECORDINGS = join(import.meta.dir, "../replay/recordings");
const CONTEXT = { requestId: "req_sealed", model: "anthropic/claude", created: 1747150000, newId: (prefix: string) => `${prefix}_1` };
const recording = (vendor: string, file: string) => readFileSync(join(RECORDINGS, vendor, file), "utf8");
const decodeBody = (protocol: ProtocolId, vendor: string, file: string) => codecFor(protocol).decodeResponse(JSON.parse(recording(vendor, file)));
const kinds = (content: IrContentPart[]) => content.map((part) => part.type);
const texts = (content: IrContentPart[]) => content.flatMap((part) => (part.type === "text" ? [part] : []));

/** The stream's parts, checked the same under every split. */
function decodeStream(protocol: ProtocolId, vendor: string, file: string): IrStreamPart[] {
  const text = recording(vendor, file);
  const whole = decodePieces(codecFor(protocol).createStreamDecoder(), [text]);
  for (const seed of REPLAY_SEEDS) expect(decodePieces(codecFor(protocol).createStreamDecoder(), splitAtRandom(text, seed))).toEqual(whole);
  return whole;
}

/** Each stream citation with the text of its current text part, as the contract defines it. */
function streamCitations(parts: IrStreamPart[]): Array<{ citation: IrCitation; partText: string }> {
  const found: Array<{ citation: IrCitation; part: { text: string } }> = [];
  let current = { text: "" };
  for (const part of parts) {
    if (part.type === "text_delta") current.text += part.text;
    else if (part.type === "citation") found.push({ citation: part.citation, part: current });
    else if (!["start", "usage", "finish", "error"].includes(part.type)) current = { text: "" };
  }
  return found.map(({ citation, part }) => ({ citation, partText: part.text }));
}

const spanned = (citation: IrCitation, text: string) => text.slice(citation.start, citation.end);

describe("openai-chat: url_citation annotations", () => {
  test("a search model's annotations are citations of the message text, at the same indices", () => {
    const body = JSON.parse(recording("openai", "openai-chat-search-annotations-sync.json"));
    const response = codecFor("openai-chat").decodeResponse(body);
    const [text] = texts(response.content);
    expect(text?.citations?.length).toBe(7);
    expect(text?.citations?.[0]).toEqual({
      url: "https://www.reuters.com/business/environment/iceland-volcano-erupts-12th-time-since-2021-2025-07-16/?utm_source=openai",
      title: "Iceland volcano emits smoke and glowing lava in 12th eruption since 2021",
      start: 565,
      end: 700,
    });
    expect(spanned(text!.citations![0]!, text!.text)).toBe("([reuters.com](https://www.reuters.com/business/environment/iceland-volcano-erupts-12th-time-since-2021-2025-07-16/?utm_source=openai))");
  });

  test("in a content array, a citation goes on the text part its span starts in, indexed in that part", () => {
    const body = {
      id: "chatcmpl-1",
      choices: [{ index: 0, finish_reason: "stop", message: {
        role: "assistant",
        content: [{ type: "text", text: "First. " }, { type: "thinking", thinking: [{ type: "text", text: "hm" }] }, { type: "text", text: "Second [a]." }],
        annotations: [{ type: "url_citation", url_citation: { url: "https://a.example", title: "A", start_index: 14, end_index: 17 } }],
      } }],
    };
    const response = codecFor("openai-chat").decodeResponse(body);
    expect(kinds(response.content)).toEqual(["text", "reasoning", "text"]);
    expect(response.content[2]).toEqual({ type: "text", text: "Second [a].", citations: [{ url: "https://a.example", title: "A", start: 7, end: 10 }] });
  });

  test("a stream's annotations are citation parts indexed in the text since the reasoning", () => {
    const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const sse =
      chunk({ reasoning_content: "think" }) + chunk({ content: "See [1]" }) + chunk({ content: " now." }) +
      chunk({ annotations: [{ type: "url_citation", url_citation: { url: "https://b.example", start_index: 4, end_index: 7 } }] }, "stop") + "data: [DONE]\n\n";
    const parts = decodePieces(codecFor("openai-chat").createStreamDecoder(), [sse]);
    const [cited] = streamCitations(parts);
    expect(cited?.citation).toEqual({ url: "https://b.example", start: 4, end: 7 });
    expect(spanned(cited!.citation, cited!.partText)).toBe("[1]");
  });
});

describe("openai-responses: web_search_call items and url_citation annotations", () => {
  test("each web_search_call is a search in answer order with its queries and sources; the message's annotations are its citations", () => {
    const response = decodeBody("openai-responses", "openai", "openai-responses-web-search-sync.json");
    expect(kinds(response.content)).toEqual(["reasoning", "web_search", "reasoning", "web_search", "reasoning", "web_search", "reasoning", "text"]);
    const searches = response.content.flatMap((part) => (part.type === "web_search" ? [part] : []));
    expect(searches[0]?.id).toBe("ws_0953eda47ee1741200693330682c988195aaa470a8cc51dfe4");
    expect(searches[0]?.queries).toEqual(["tech news today December 5 2025"]);
    expect(searches[0]?.results.length).toBe(16);
    expect(searches[0]?.results[0]).toEqual({ url: "https://www.theverge.com/podcast/838932/openai-chatgpt-code-red-vergecast" });
    // open_page and find_in_page: the page is the result, there is no query.
    expect(searches[1]).toEqual({ type: "web_search", id: "ws_0953eda47ee17412006933306f501c8195b9d3dfba4c547834", queries: [], results: [{ url: "https://www.theverge.com/podcast/838932/openai-chatgpt-code-red-vergecast" }] });
    const [text] = texts(response.content);
    expect(text?.citations?.length).toBe(10);
    expect(text?.citations?.[0]).toEqual({ url: "https://www.theverge.com/podcast/838932/openai-chatgpt-code-red-vergecast", title: "Why OpenAI declared a code red for ChatGPT | The Verge", start: 426, end: 517 });
    expect(response.usage?.webSearchCount).toBe(3);
  });

  test("xAI's search query is read from its arguments, and its annotations without indices cite the whole text", () => {
    const response = decodeBody("openai-responses", "xai", "xai-responses-web-search-sync.json");
    expect(response.content[0]).toEqual({ type: "web_search", id: "fc_25de2f84-163c-6e9e-e42e-cd1dbd6f9ed0_0", queries: ["what is xAI"], results: [] });
    expect(texts(response.content)[0]?.citations?.[1]).toEqual({ url: "https://x.ai/company" });
  });

  test("a stream sends the finished search, then each annotation once, and counts the search in its usage", () => {
    const parts = decodeStream("openai-responses", "openai", "openai-responses-annotations-stream.sse");
    expect(parts.filter((part) => part.type === "web_search" || part.type === "citation").map((part) => part.type)).toEqual(["web_search", "citation"]);
    expect(parts.find((part) => part.type === "web_search")).toEqual({
      type: "web_search",
      search: { type: "web_search", id: "ws_0b5cbf1ce3f8b01c00696d5e6dd828819ca5c5eaf4bc746b6f", queries: ["tallest mountain in Alberta"], results: [] },
    });
    const [cited] = streamCitations(parts);
    expect(cited?.citation).toEqual({ url: "https://www.britannica.com/place/Mount-Columbia?utm_source=openai", title: "Mount Columbia | mountain, Alberta, Canada | Britannica", start: 94, end: 179 });
    expect(spanned(cited!.citation, cited!.partText)).toBe("([britannica.com](https://www.britannica.com/place/Mount-Columbia?utm_source=openai))");
    const usage = parts.find((part) => part.type === "usage");
    expect(usage?.type === "usage" ? usage.usage.webSearchCount : undefined).toBe(1);
  });

  test("without annotation events, the finished part's annotations are sent, once", () => {
    const text = recording("openai", "openai-responses-annotations-stream.sse")
      .split("\n\n")
      .filter((frame) => !frame.includes("response.output_text.annotation.added"))
      .join("\n\n");
    const parts = decodePieces(codecFor("openai-responses").createStreamDecoder(), [text]);
    expect(streamCitations(parts).map(({ citation }) => [citation.start, citation.end])).toEqual([[94, 179]]);
  });

  test("a second message's citation is moved past the first message's text in the same text part", () => {
    const event = (data: object) => `data: ${JSON.stringify(data)}\n\n`;
    const sse =
      event({ type: "response.created", response: { id: "resp_1" } }) +
      event({ type: "response.output_text.delta", item_id: "m1", content_index: 0, delta: "One. " }) +
      event({ type: "response.output_text.delta", item_id: "m2", content_index: 0, delta: "Two [x]." }) +
      event({ type: "response.output_text.annotation.added", item_id: "m2", content_index: 0, annotation_index: 0, annotation: { type: "url_citation", url: "https://x.example", start_index: 4, end_index: 7 } }) +
      event({ type: "response.completed", response: { id: "resp_1", status: "completed" } });
    const [cited] = streamCitations(decodePieces(codecFor("openai-responses").createStreamDecoder(), [sse]));
    expect(cited?.citation).toEqual({ url: "https://x.example", start: 9, end: 12 });
    expect(spanned(cited!.citation, cited!.partText)).toBe("[x]");
  });
});

describe("anthropic-messages: the web search tool and text block citations", () => {
  test("each web_search server tool use is one search where it was, with its result block's pages; each text block keeps its citations", () => {
    const response = decodeBody("anthropic-messages", "anthropic", "anthropic-web-search-sync.json");
    expect(kinds(response.content)).toEqual(["web_search", "text", "web_search", "text", "text", "text", "text", "text", "text", "text"]);
    const first = response.content[0];
    expect(first?.type === "web_search" && first.id).toBe("srvtoolu_01Qxbje4duKBes3Nj42MkZug");
    expect(first?.type === "web_search" && first.queries).toEqual(["tech news today September 26 2024"]);
    expect(first?.type === "web_search" && first.results.length).toBe(10);
    expect(first?.type === "web_search" && first.results[5]).toEqual({
      url: "https://www.cnbc.com/technology/",
      title: "Technology News",
      pageAge: "December 21, 2015",
      sealed: { protocol: "anthropic-messages", value: expect.stringMatching(/^EvsCCioICBgCIiRiY2Jj/) },
    });
    expect(response.content[2]).toEqual({ type: "web_search", id: "srvtoolu_01HyorfKHSCsjCUVH6WHcNUC", queries: ['"September 26 2024" tech news breaking'], results: [] });
    const cited = texts(response.content).filter((part) => part.citations !== undefined);
    expect(cited.length).toBe(3);
    expect(cited[0]?.citations).toEqual([{
      url: "https://acecomments.mu.nu/?post=411647",
      title: "Daily Tech News 26 September 2024",
      citedText: "Daily Tech News 26 September 2024 · Top Story Caroline Ellison, Sam Bankman-Fried&#x27;s right-hand woman in the FTX kerfuffle, has been sentenced to ...",
      sealed: { protocol: "anthropic-messages", value: expect.stringMatching(/^Eo8BCioICBgCIiRiY2Jj/) },
    }]);
  });

  test("re-encoded for Messages (a response-side check, a customer's own base), Anthropic's sealed tokens come back as they came: the client replays them to Anthropic", () => {
    const recorded = JSON.parse(readFileSync(join(RECORDINGS, "anthropic", "anthropic-web-search-sync.json"), "utf8"));
    const response = decodeBody("anthropic-messages", "anthropic", "anthropic-web-search-sync.json");
    const encoded = codecFor("anthropic-messages").encodeResponse(response, CONTEXT).value as { content: any[] };
    const sealedOf = (content: any[]) => ({
      results: content.filter((block) => block.type === "web_search_tool_result").flatMap((block) => (Array.isArray(block.content) ? block.content : [])).map((page: any) => page.encrypted_content),
      citations: content.flatMap((block) => block.citations ?? []).map((citation: any) => citation.encrypted_index),
    });
    const want = sealedOf(recorded.content);
    expect(want.results.length).toBe(10);
    expect(want.citations.length).toBeGreaterThan(0);
    expect(sealedOf(encoded.content)).toEqual(want);
    // Another vendor's page has no token to give: "", not something made up.
    const foreign = codecFor("anthropic-messages").encodeResponse({
      content: [{ type: "web_search", id: "ws_1", queries: ["q"], results: [{ url: "https://a.example", sealed: { protocol: "google-generate-content", value: "not-anthropic" } }] }],
      finish: { reason: "stop" },
    }, CONTEXT).value as { content: any[] };
    expect(sealedOf(foreign.content).results).toEqual([""]);
  });

  test("a search's error and a document citation are carried; another server tool is still named", () => {
    const response = codecFor("anthropic-messages").decodeResponse({
      type: "message", id: "msg_1", model: "claude", stop_reason: "end_turn",
      content: [
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" } },
        { type: "server_tool_use", id: "srvtoolu_2", name: "web_fetch", input: { url: "https://c.example" } },
        { type: "text", text: "Per the file.", citations: [{ type: "char_location", cited_text: "grass is green", document_index: 0, document_title: "Notes", start_char_index: 0, end_char_index: 14 }] },
      ],
    });
    expect(response.content[0]).toEqual({ type: "web_search", id: "srvtoolu_1", queries: ["q"], results: [], errorCode: "max_uses_exceeded" });
    expect(response.content[1]).toEqual({
      type: "text",
      text: "Per the file.",
      citations: [{
        title: "Notes",
        citedText: "grass is green",
        document: { protocol: "anthropic-messages", raw: { type: "char_location", cited_text: "grass is green", document_index: 0, document_title: "Notes", start_char_index: 0, end_char_index: 14 } },
      }],
    });
    expect(response.warnings?.map((warning) => warning.field)).toEqual(["output.server_tool_use"]);
  });

  test("a stream sends the search when its result arrives and each block's citations at its stop, spanning the block", () => {
    const parts = decodeStream("anthropic-messages", "anthropic", "anthropic-web-search-stream.sse");
    const search = parts.find((part) => part.type === "web_search");
    expect(search?.type === "web_search" && search.search.id).toBe("srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k");
    expect(search?.type === "web_search" && search.search.queries).toEqual(["tech news today September 26 2025"]);
    expect(search?.type === "web_search" && search.search.results.length).toBe(10);
    const cited = streamCitations(parts);
    expect(cited.length).toBe(14);
    for (const { citation, partText } of cited) {
      expect(citation.start).toBeDefined();
      expect(citation.end).toBeGreaterThan(citation.start!);
      expect(citation.end).toBeLessThanOrEqual(partText.length);
    }
    // The first cited block follows an uncited one of 116 characters in the same text part.
    expect(cited[0]?.citation.start).toBe(116);
    expect(cited[0]!.partText.slice(0, 116)).toStartWith("Based on my search results, here are the key tech news developments");
  });

  test("a stream's web search tool use that never gets a result is sent before the finish, with none", () => {
    const event = (data: object) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`;
    const sse =
      event({ type: "message_start", message: { id: "msg_1", model: "claude", usage: { input_tokens: 1, output_tokens: 1 } } }) +
      event({ type: "content_block_start", index: 0, content_block: { type: "server_tool_use", id: "srvtoolu_9", name: "web_search", input: {} } }) +
      event({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"query":' } }) +
      event({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '"late"}' } }) +
      event({ type: "content_block_stop", index: 0 }) +
      event({ type: "message_delta", delta: { stop_reason: "pause_turn" }, usage: { output_tokens: 5 } }) +
      event({ type: "message_stop" });
    const parts = decodePieces(codecFor("anthropic-messages").createStreamDecoder(), [sse]);
    expect(parts.filter((part) => part.type === "web_search" || part.type === "finish").map((part) => part.type)).toEqual(["web_search", "finish"]);
    expect(parts.find((part) => part.type === "web_search")).toEqual({ type: "web_search", search: { type: "web_search", id: "srvtoolu_9", queries: ["late"], results: [] } });
  });
});

describe("google-generate-content: grounding", () => {
  test("the search comes before the text, with its web chunks as pages; each support and chunk is a citation spanning its segment", () => {
    const response = decodeBody("google-generate-content", "google", "google-web-search-sync.json");
    expect(kinds(response.content)).toEqual(["web_search", "text"]);
    const search = response.content[0];
    expect(search?.type === "web_search" && search.id).toBe("ws_btnJaOrqE4_6qtsP7bOboQs_0");
    expect(search?.type === "web_search" && search.queries).toEqual(["weather in San Francisco today"]);
    expect(search?.type === "web_search" && search.results.map((result) => result.title)).toEqual(["Weather information for San Francisco, CA, US", "weather.gov", "wunderground.com"]);
    const [text] = texts(response.content);
    expect(text?.citations?.length).toBe(6);
    // Bytes 55..216 hold "69°F": one character fewer than bytes.
    expect(text?.citations?.[0]).toMatchObject({ url: "https://www.google.com/search?q=weather+in+San Francisco, CA,+US", start: 55, end: 215 });
    for (const citation of text!.citations!) expect(spanned(citation, text!.text)).toBe(citation.citedText!);
  });

  test("URL context grounds without a search: the support is a citation, there is no search part", () => {
    const response = decodeBody("google-generate-content", "google", "google-url-context-sync.json");
    expect(kinds(response.content)).not.toContain("web_search");
    expect(texts(response.content)[0]?.citations?.[0]).toMatchObject({ url: "https://ai.pydantic.dev", title: "Pydantic AI", start: 0 });
  });

  test("a stream sends the citations of the text so far, then the search, then the finish", () => {
    const parts = decodeStream("google-generate-content", "google", "google-web-search-stream.sse");
    const tail = parts.filter((part) => ["citation", "web_search", "finish"].includes(part.type)).map((part) => part.type);
    expect(tail).toEqual([...Array(9).fill("citation"), "web_search", "finish"]);
    for (const { citation, partText } of streamCitations(parts)) expect(spanned(citation, partText)).toBe(citation.citedText!);
    const search = parts.find((part) => part.type === "web_search");
    expect(search?.type === "web_search" && search.search.results.length).toBe(5);
  });

  test("UTF-8 byte offsets become string indices, astral characters included", () => {
    const text = "a°€😀b";
    expect(utf8Length(text)).toBe(1 + 2 + 3 + 4 + 1);
    expect([0, 1, 3, 6, 10, 11].map((offset) => indexOfByte(text, offset))).toEqual([0, 1, 2, 3, 5, 6]);
    expect(indexOfByte(text, 2)).toBeUndefined(); // inside "°"
  });
});
