/**
 * Decoders never drop silently: whatever of a recorded upstream answer the IR has no place
 * for (server-tool blocks and their results other than web search, hosted tool items, file
 * annotations, URL context, code execution parts, Groq's executed tools) is named in the
 * decoder's warnings as `dropped_content:output.<kind>`, once per kind, the same for a body
 * and its stream cut anywhere. An answer with none of it raises nothing, and a same-protocol
 * relay reports nothing (it drops nothing).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { IrWarning, ProtocolId } from "../../src/ir";
import { codecFor } from "../../src/translation/codec-registry";
import { translateResponse } from "../../src/translation/translate-response";
import { StreamTranslation } from "../../src/translation/stream-translation";
import { REPLAY_SEEDS, splitAtRandom } from "../support/split-chunks";
import { decodePieces } from "./openai-chat/replay-sse";

const RECORDINGS = join(import.meta.dir, "../replay/recordings");
const FIXTURES = join(import.meta.dir, "../fixtures");

const recording = (vendor: string, file: string) => readFileSync(join(RECORDINGS, vendor, file), "utf8");
const fields = (warnings: readonly IrWarning[] | undefined) => (warnings ?? []).map((warning) => `${warning.code}:${warning.field}`);
const dropped = (...kinds: string[]) => kinds.map((kind) => `dropped_content:output.${kind}`);

function bodyWarnings(protocol: ProtocolId, text: string): string[] {
  return fields(codecFor(protocol).decodeResponse(JSON.parse(text)).warnings);
}

/** The decoder's warnings after the whole stream, the same however the bytes are cut. */
function streamWarnings(protocol: ProtocolId, text: string): string[] {
  const decoder = codecFor(protocol).createStreamDecoder();
  decodePieces(decoder, [text]);
  const whole = fields(decoder.warnings);
  for (const seed of REPLAY_SEEDS) {
    const split = codecFor(protocol).createStreamDecoder();
    decodePieces(split, splitAtRandom(text, seed));
    expect(fields(split.warnings)).toEqual(whole);
  }
  return whole;
}

describe("anthropic-messages decoders name server-tool blocks other than web search", () => {
  const MESSAGES = "anthropic-messages";

  test("a web search answer (the tool use, its results, the text blocks' citations) is carried: nothing is named", () => {
    expect(bodyWarnings(MESSAGES, recording("anthropic", "anthropic-web-search-sync.json"))).toEqual([]);
    expect(streamWarnings(MESSAGES, recording("anthropic", "anthropic-web-search-stream.sse"))).toEqual([]);
  });

  test("code execution, web fetch, MCP, tool search and compaction blocks are named by their type", () => {
    expect(bodyWarnings(MESSAGES, recording("anthropic", "anthropic-code-execution-sync.json")).sort()).toEqual(
      dropped("bash_code_execution_tool_result", "server_tool_use", "text_editor_code_execution_tool_result").sort(),
    );
    expect(streamWarnings(MESSAGES, recording("anthropic", "anthropic-code-execution-stream.sse")).sort()).toEqual(
      dropped("bash_code_execution_tool_result", "server_tool_use", "text_editor_code_execution_tool_result").sort(),
    );
    expect(bodyWarnings(MESSAGES, recording("anthropic", "anthropic-web-fetch-sync.json"))).toEqual(dropped("server_tool_use", "web_fetch_tool_result"));
    expect(bodyWarnings(MESSAGES, recording("anthropic", "anthropic-mcp-sync.json"))).toEqual(dropped("mcp_tool_use", "mcp_tool_result"));
    expect(streamWarnings(MESSAGES, recording("anthropic", "anthropic-mcp-stream.sse"))).toEqual(dropped("mcp_tool_use", "mcp_tool_result"));
    expect(bodyWarnings(MESSAGES, recording("anthropic", "anthropic-tool-search-sync.json"))).toEqual(dropped("server_tool_use", "tool_search_tool_result"));
    expect(bodyWarnings(MESSAGES, recording("anthropic", "anthropic-compaction-sync.json"))).toEqual(dropped("compaction"));
  });

  test("the text and the client's tool call beside the server blocks are kept", () => {
    const body = JSON.parse(recording("anthropic", "anthropic-tool-search-sync.json"));
    const response = codecFor(MESSAGES).decodeResponse(body);
    const toolUses = body.content.filter((block: { type: string }) => block.type === "tool_use").map((block: { name: string }) => block.name);
    expect(response.content.filter((part) => part.type === "tool_call").map((part) => (part.type === "tool_call" ? part.name : ""))).toEqual(toolUses);
    expect(response.content.some((part) => part.type === "text" && part.text !== "")).toBe(true);
  });

  test("text, thinking, redacted thinking and tool use raise nothing", () => {
    for (const file of ["anthropic-thinking-tool-sync.json", "anthropic-redacted-thinking-sync.json", "anthropic-parallel-tools-sync.json"]) {
      expect(codecFor(MESSAGES).decodeResponse(JSON.parse(recording("anthropic", file))).warnings).toBeUndefined();
    }
    for (const file of ["anthropic-thinking-signed-stream.sse", "anthropic-redacted-thinking-stream.sse", "anthropic-tool-no-args-stream.sse"]) {
      expect(streamWarnings(MESSAGES, recording("anthropic", file))).toEqual([]);
    }
  });
});

describe("openai-responses decoders name hosted tool items and annotations other than web search and url_citation", () => {
  const RESPONSES = "openai-responses";

  test("a web search answer (the calls, the url_citation annotations) is carried: nothing is named, and the searches are counted", () => {
    const response = codecFor(RESPONSES).decodeResponse(JSON.parse(recording("openai", "openai-responses-web-search-sync.json")));
    expect(response.warnings).toBeUndefined();
    expect(response.usage?.webSearchCount).toBe(3); // its three web_search_call items
  });

  test("every hosted item type is named: code interpreter, image generation, MCP, tool search, program, xAI's x_search_call", () => {
    expect(bodyWarnings(RESPONSES, recording("openai", "openai-responses-code-interpreter-sync.json")).sort()).toEqual(dropped("annotations", "code_interpreter_call").sort());
    expect(bodyWarnings(RESPONSES, recording("openai", "openai-responses-image-generation-sync.json"))).toEqual(dropped("image_generation_call"));
    expect(bodyWarnings(RESPONSES, recording("openai", "openai-responses-mcp-call-sync.json"))).toEqual(dropped("mcp_list_tools", "mcp_call"));
    expect(bodyWarnings(RESPONSES, recording("openai", "openai-responses-tool-search-sync.json"))).toEqual(dropped("tool_search_call", "tool_search_output"));
    expect(bodyWarnings(RESPONSES, recording("openai", "openai-responses-program-sync.json"))).toEqual(dropped("program"));
    expect(bodyWarnings(RESPONSES, recording("xai", "xai-responses-x-search-sync.json"))).toEqual(dropped("x_search_call"));
  });

  test("streams name the items as they are added and the annotations as they come", () => {
    expect(streamWarnings(RESPONSES, recording("openai", "openai-responses-annotations-stream.sse"))).toEqual([]);
    expect(streamWarnings(RESPONSES, recording("openai", "openai-responses-file-search-stream.sse")).sort()).toEqual(dropped("annotations", "file_search_call").sort());
    expect(streamWarnings(RESPONSES, recording("openai", "openai-responses-reasoning-code-interpreter-stream.sse"))).toEqual(dropped("code_interpreter_call"));
  });

  test("a pending MCP approval is an action for the client, not a dropped item; the tool list beside it is", () => {
    const response = codecFor(RESPONSES).decodeResponse(JSON.parse(recording("openai", "openai-responses-mcp-approval-sync.json")));
    expect(response.clientAction).toBe("mcp_approval_request");
    expect(fields(response.warnings)).toEqual(dropped("mcp_list_tools"));
  });

  test("messages, reasoning and function calls raise nothing", () => {
    for (const file of ["openai-responses-parallel-tools-sync.json", "openai-responses-reasoning-summary-sync.json", "openai-responses-thinking-tool-sync.json"]) {
      expect(codecFor(RESPONSES).decodeResponse(JSON.parse(recording("openai", file))).warnings).toBeUndefined();
    }
    expect(streamWarnings(RESPONSES, recording("github-copilot", "github-copilot-responses-reasoning-stream.sse"))).toEqual([]);
    expect(streamWarnings(RESPONSES, recording("azure", "azure-responses-tool-stream.sse"))).toEqual([]);
  });
});

describe("google-generate-content decoders name URL context, file search chunks and code execution", () => {
  const GEMINI = "google-generate-content";

  test("a grounded answer's web search and supports are carried; a URL context answer names its urlContextMetadata", () => {
    expect(bodyWarnings(GEMINI, recording("google", "google-web-search-sync.json"))).toEqual([]);
    expect(streamWarnings(GEMINI, recording("google", "google-web-search-stream.sse"))).toEqual([]);
    expect(bodyWarnings(GEMINI, recording("google", "google-url-context-sync.json"))).toEqual(dropped("urlContextMetadata"));
    expect(streamWarnings(GEMINI, recording("google", "google-url-context-stream.sse"))).toEqual(dropped("urlContextMetadata"));
  });

  test("an executableCode part is named by its field, a file search chunk by its kind, and the text after them is kept", () => {
    const text = readFileSync(join(FIXTURES, GEMINI, "stream-file-search-code-execution.sse"), "utf8");
    expect(streamWarnings(GEMINI, text)).toEqual(dropped("executableCode", "retrievedContext"));
    const parts = decodePieces(codecFor(GEMINI).createStreamDecoder(), [text]);
    expect(parts.some((part) => part.type === "text_delta" && part.text !== "")).toBe(true);
  });

  test("text, thoughts with signatures and function calls raise nothing", () => {
    for (const file of ["google-thoughts-sync.json", "google-parallel-tools-sync.json", "google-gemini3-tool-sync.json"]) {
      expect(codecFor(GEMINI).decodeResponse(JSON.parse(recording("google", file))).warnings).toBeUndefined();
    }
    expect(streamWarnings(GEMINI, recording("google", "google-thought-signature-stream.sse"))).toEqual([]);
  });
});

describe("openai-chat decoders name annotations other than url_citation and executed tools", () => {
  const CHAT = "openai-chat";

  test("a search model's url_citation annotations are carried, another type is named; OpenAI's empty list is not", () => {
    expect(bodyWarnings(CHAT, recording("openai", "openai-chat-search-annotations-sync.json"))).toEqual([]);
    const body = JSON.parse(recording("openai", "openai-chat-search-annotations-sync.json"));
    body.choices[0].message.annotations.push({ type: "file_citation", file_citation: { file_id: "file_1" } });
    expect(bodyWarnings(CHAT, JSON.stringify(body))).toEqual(dropped("annotations"));
    expect(codecFor(CHAT).decodeResponse(JSON.parse(recording("openai", "openai-chat-search-preview-sync.json"))).warnings).toBeUndefined();
    expect(codecFor(CHAT).decodeResponse(JSON.parse(recording("openai", "openai-chat-tool-sync.json"))).warnings).toBeUndefined();
  });

  test("Groq's executed_tools (a compound model's searches) are named", () => {
    expect(bodyWarnings(CHAT, recording("groq", "groq-web-search-sync.json"))).toEqual(dropped("executed_tools"));
  });

  test("choices after the first are named", () => {
    const body = JSON.parse(recording("openai", "openai-chat-text-sync.json"));
    body.choices.push({ ...body.choices[0], index: 1 });
    expect(bodyWarnings(CHAT, JSON.stringify(body))).toEqual(dropped("choices"));
  });
});

describe("the warnings reach a translation, and a same-protocol relay reports nothing", () => {
  const CONTEXT = { requestId: "req_decoder_warnings", model: "vendor/model", created: 1747150000 };

  test("a whole answer translated for another protocol carries the decoder's warnings before the encoder's", () => {
    const body = recording("anthropic", "anthropic-web-fetch-sync.json");
    const translated = translateResponse({ upstream: "anthropic-messages", client: "openai-chat", body, context: CONTEXT });
    expect(fields(translated.warnings)).toEqual(dropped("server_tool_use", "web_fetch_tool_result"));
    expect(translateResponse({ upstream: "anthropic-messages", client: "anthropic-messages", body, context: CONTEXT }).warnings).toEqual([]);
  });

  test("a translated stream reports each kind once, with the output of the call that dropped it; a relayed one reports none", () => {
    const text = recording("openai", "openai-responses-file-search-stream.sse");
    const open = (client: ProtocolId) =>
      new StreamTranslation({ sessionId: "s", upstream: "openai-responses", client, context: CONTEXT, clientAskedUsage: false, passthrough: client === "openai-responses" });
    const translated = open("google-generate-content");
    const outputs = [...splitAtRandom(text, 42).map((piece) => translated.push(piece)), translated.end()];
    expect(outputs.flatMap((output) => fields(output.warnings))).toEqual(dropped("file_search_call", "annotations"));
    const relayed = open("openai-responses");
    const relayedOutputs = [relayed.push(text), relayed.end()];
    expect(relayedOutputs.some((output) => "warnings" in output)).toBe(false);
  });
});
