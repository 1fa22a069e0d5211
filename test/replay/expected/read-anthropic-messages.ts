/**
 * An Anthropic Messages answer (https://docs.anthropic.com/en/api/messages), a body or its
 * stream (https://docs.anthropic.com/en/api/messages-streaming) replayed into the message
 * it builds, read into an ExpectedAnswer.
 */
import { cite, emptyAnswer, type ExpectedAnswer, type Finish } from "./expected-answer";
import { sseJson } from "../../metering/metering-support";

const STOP_REASONS: Readonly<Record<string, Finish>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/** https://docs.anthropic.com/en/api/errors: the status each error type is sent with. */
const ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** Block types the client runs nothing for and that are not text, reasoning or a tool call. */
function serverToolKind(block: any): string | undefined {
  if (block.type === "server_tool_use") return String(block.name);
  if (block.type === "mcp_tool_use") return `mcp:${String(block.name)}`;
  // Results pair with their use block; anything else (compaction, advisor, fallback) is content of its own.
  if (typeof block.type === "string" && !block.type.endsWith("_tool_result") && !["text", "thinking", "redacted_thinking", "tool_use"].includes(block.type)) {
    return block.type;
  }
  return undefined;
}

function readMessage(message: any, answer: ExpectedAnswer): ExpectedAnswer {
  for (const block of message.content ?? []) {
    switch (block.type) {
      case "text":
        answer.text += block.text ?? "";
        for (const citation of block.citations ?? []) cite(answer, citation.url ?? citation.document_title ?? citation.title, typeof citation.url === "string" ? "web" : "document");
        break;
      case "thinking":
        answer.reasoning += block.thinking ?? "";
        if (typeof block.signature === "string" && block.signature !== "") answer.signedReasoning = true;
        break;
      case "redacted_thinking":
        answer.redactedReasoning += 1;
        break;
      case "tool_use":
        answer.toolCalls.push({ name: block.name, arguments: block.input ?? {} });
        break;
      default: {
        const kind = serverToolKind(block);
        if (kind !== undefined) answer.serverTools.push(kind);
      }
    }
  }
  if (typeof message.stop_reason === "string") answer.finish = STOP_REASONS[message.stop_reason] ?? "other";
  const usage = message.usage;
  if (usage !== undefined && usage !== null) {
    const cacheRead = usage.cache_read_input_tokens ?? undefined;
    const cacheWrite = usage.cache_creation_input_tokens ?? undefined;
    answer.usage = {
      ...(usage.input_tokens === undefined ? {} : { prompt: usage.input_tokens + (cacheRead ?? 0) + (cacheWrite ?? 0) }),
      ...(usage.output_tokens === undefined ? {} : { completion: usage.output_tokens }),
      ...(usage.output_tokens_details?.thinking_tokens === undefined ? {} : { reasoning: usage.output_tokens_details.thinking_tokens }),
      ...(cacheRead === undefined ? {} : { cacheRead }),
      ...(cacheWrite === undefined ? {} : { cacheWrite }),
    };
  }
  return answer;
}

/** The message a stream builds: blocks from their start and deltas, usage merged field by field (later wins). */
function replayStream(bytes: string, answer: ExpectedAnswer): any {
  let message: any = { content: [] };
  const partialJson = new Map<number, string>();
  for (const json of sseJson(bytes)) {
    switch (json.type) {
      case "message_start":
        message = { ...json.message, content: [] };
        break;
      case "content_block_start":
        message.content[json.index] = structuredClone(json.content_block);
        break;
      case "content_block_delta": {
        const block = message.content[json.index];
        const delta = json.delta;
        if (delta.type === "text_delta") block.text = (block.text ?? "") + delta.text;
        else if (delta.type === "thinking_delta") block.thinking = (block.thinking ?? "") + delta.thinking;
        else if (delta.type === "signature_delta") block.signature = (block.signature ?? "") + delta.signature;
        else if (delta.type === "input_json_delta") partialJson.set(json.index, (partialJson.get(json.index) ?? "") + delta.partial_json);
        else if (delta.type === "citations_delta") (block.citations ??= []).push(delta.citation);
        break;
      }
      case "content_block_stop": {
        const text = partialJson.get(json.index);
        if (text !== undefined && text.trim() !== "") message.content[json.index].input = JSON.parse(text);
        break;
      }
      case "message_delta":
        Object.assign(message, json.delta);
        for (const [key, value] of Object.entries(json.usage ?? {})) if (value !== null) (message.usage ??= {})[key] = value;
        break;
      case "error":
        answer.error = { message: json.error?.message ?? "", statuses: ERROR_STATUS[json.error?.type] === undefined ? [] : [ERROR_STATUS[json.error.type]!] };
        break;
    }
  }
  message.content = message.content.filter((block: unknown) => block !== undefined);
  return message;
}

export function readAnthropicMessages(bytes: string, mode: "sync" | "stream"): ExpectedAnswer {
  const answer = emptyAnswer();
  const message = mode === "sync" ? JSON.parse(bytes) : replayStream(bytes, answer);
  readMessage(message, answer);
  if (answer.error !== undefined) answer.finish = "error";
  return answer;
}
