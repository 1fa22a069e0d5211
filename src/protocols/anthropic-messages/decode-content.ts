import { splitToolResults } from "../shared/split-tool-results";
import {
  IrDecodeError,
  type IrContentPart,
  type IrImagePart,
  type IrMessage,
  type IrTextPart,
  type IrToolResultPart,
  type IrWarning,
} from "../../ir";
import { isRecord, readBoolean, readString, requireString, type JsonObject } from "../shared/json-fields";
import { toolResultFor } from "../shared/tool-result";

/** Decoder state shared across one request: warnings, and tool names by tool_use id. */
export interface ContentDecodeState {
  warnings: IrWarning[];
  /** tool_use id -> name, so a later tool_result can name its tool (Gemini needs the name). */
  toolNames: Map<string, string>;
}

function skipped(state: ContentDecodeState, path: string, message: string): undefined {
  state.warnings.push({ code: "dropped_content", field: path, message });
  return undefined;
}

function decodeText(block: JsonObject, path: string): IrTextPart {
  const text = block.text;
  if (typeof text !== "string") throw new IrDecodeError(`${path}.text must be a string`);
  const part: IrTextPart = { type: "text", text };
  if (block.cache_control !== undefined && block.cache_control !== null) part.cacheControl = block.cache_control;
  return part;
}

function readSource(block: JsonObject, path: string): JsonObject {
  const source = block.source;
  if (!isRecord(source) || typeof source.type !== "string") throw new IrDecodeError(`${path}.source must be an object with a type`);
  return source;
}

function decodeImage(block: JsonObject, path: string, state: ContentDecodeState): IrImagePart | undefined {
  const source = readSource(block, path);
  if (source.type === "base64") {
    const mediaType = readString(source, "media_type", `${path}.source.media_type`);
    const data = requireString(source, "data", `${path}.source.data`);
    return mediaType === undefined ? { type: "image", data } : { type: "image", mediaType, data };
  }
  if (source.type === "url") {
    const url = requireString(source, "url", `${path}.source.url`);
    return { type: "image", url };
  }
  return skipped(state, path, `image source type "${source.type}" is not portable and was skipped`);
}

/** Document blocks (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support): PDF base64/url or plain text. */
function decodeDocument(block: JsonObject, path: string, state: ContentDecodeState): IrContentPart | undefined {
  const source = readSource(block, path);
  const title = readString(block, "title", `${path}.title`);
  const named = title === undefined ? {} : { filename: title };
  if (source.type === "base64" || source.type === "text") {
    const data = requireString(source, "data", `${path}.source.data`);
    if (source.type === "text") {
      // The IR carries file bytes as base64, so plain text is encoded here and decoded by the encoder.
      return { type: "file", mediaType: "text/plain", data: Buffer.from(data, "utf8").toString("base64"), ...named };
    }
    const mediaType = readString(source, "media_type", `${path}.source.media_type`) ?? "application/pdf";
    return { type: "file", mediaType, data, ...named };
  }
  if (source.type === "url") {
    const url = requireString(source, "url", `${path}.source.url`);
    return { type: "file", mediaType: "application/pdf", url, ...named };
  }
  return skipped(state, path, `document source type "${source.type}" is not portable and was skipped`);
}

function decodeToolResult(block: JsonObject, path: string, state: ContentDecodeState): IrToolResultPart {
  const callId = requireString(block, "tool_use_id", `${path}.tool_use_id`);
  const content = block.content;
  let output: IrToolResultPart["output"];
  if (content === undefined || content === null) output = "";
  else if (typeof content === "string") output = content;
  else if (Array.isArray(content)) {
    const items: Array<IrTextPart | IrImagePart> = [];
    content.forEach((item, index) => {
      const itemPath = `${path}.content[${index}]`;
      if (!isRecord(item)) throw new IrDecodeError(`${itemPath} must be an object`);
      if (item.type === "text") items.push(decodeText(item, itemPath));
      else if (item.type === "image") {
        const image = decodeImage(item, itemPath, state);
        if (image !== undefined) items.push(image);
      } else skipped(state, itemPath, `tool_result content type "${String(item.type)}" is not portable and was skipped`);
    });
    output = items;
  } else throw new IrDecodeError(`${path}.content must be a string or an array of blocks`);
  const part = toolResultFor(callId, output, state.toolNames);
  if (readBoolean(block, "is_error", `${path}.is_error`) === true) part.isError = true;
  return part;
}

/** One content block -> IR part, or undefined when it was skipped (with a warning). */
export function decodeAnthropicBlock(block: unknown, path: string, state: ContentDecodeState): IrContentPart | undefined {
  if (!isRecord(block) || typeof block.type !== "string") throw new IrDecodeError(`${path} must be an object with a type`);
  switch (block.type) {
    case "text":
      return decodeText(block, path);
    case "image":
      return decodeImage(block, path, state);
    case "document":
      return decodeDocument(block, path, state);
    case "tool_use": {
      const id = readString(block, "id", `${path}.id`);
      const name = readString(block, "name", `${path}.name`);
      if (id === undefined || name === undefined) throw new IrDecodeError(`${path} needs a string id and name`);
      const input = block.input ?? {};
      if (!isRecord(input)) throw new IrDecodeError(`${path}.input must be an object`);
      state.toolNames.set(id, name);
      return { type: "tool_call", id, name, arguments: JSON.stringify(input) };
    }
    case "tool_result":
      return decodeToolResult(block, path, state);
    case "thinking": {
      const text = readString(block, "thinking", `${path}.thinking`) ?? "";
      const signature = readString(block, "signature", `${path}.signature`);
      // Anthropic rejects replayed thinking without its signature: keep signed only.
      if (signature === undefined || signature === "") return skipped(state, path, "unsigned thinking block skipped");
      return { type: "reasoning", text, signature, signatureProtocol: "anthropic-messages" };
    }
    case "redacted_thinking": {
      const data = readString(block, "data", `${path}.data`);
      if (data === undefined || data === "") return skipped(state, path, "redacted_thinking block without data skipped");
      return { type: "reasoning", text: "", redactedData: data, signatureProtocol: "anthropic-messages" };
    }
    default:
      return skipped(state, path, `unsupported content block type "${block.type}" skipped`);
  }
}

const ROLES = new Set(["user", "assistant", "system"]);

/**
 * Messages -> IR messages. `tool_result` blocks inside a user message are split out into
 * their own role:"tool" messages, one per result, in their original
 * position relative to the surrounding user content.
 */
export function decodeAnthropicMessages(messages: unknown[], state: ContentDecodeState): IrMessage[] {
  const result: IrMessage[] = [];
  messages.forEach((message, index) => {
    const path = `messages[${index}]`;
    if (!isRecord(message)) throw new IrDecodeError(`${path} must be an object`);
    const role = message.role;
    if (typeof role !== "string" || !ROLES.has(role)) {
      throw new IrDecodeError(`${path}.role must be "user", "assistant" or "system"`);
    }
    const irRole = role as "user" | "assistant" | "system";
    const content = message.content;
    if (typeof content === "string") {
      result.push({ role: irRole, content: [{ type: "text", text: content }] });
      return;
    }
    if (!Array.isArray(content)) throw new IrDecodeError(`${path}.content must be a string or an array of content blocks`);
    const parts: IrContentPart[] = [];
    content.forEach((block, blockIndex) => {
      const part = decodeAnthropicBlock(block, `${path}.content[${blockIndex}]`, state);
      if (part !== undefined) parts.push(part);
    });
    result.push(...splitToolResults(irRole, parts));
  });
  return result;
}
