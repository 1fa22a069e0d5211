import type { IrContentPart, IrImagePart, IrMessage, IrTextPart, IrToolResultPart, IrWarning } from "../../ir";
import { splitDataUrl } from "../shared/data-url";
import { replayedArguments } from "../shared/json-fields";
import type {
  AnthropicContentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
} from "./wire-types";

/** Anthropic needs `media_type`; sniff the common image magic numbers when the IR lacks it. */
function sniffImageType(base64: string): string {
  if (base64.startsWith("/9j/")) return "image/jpeg";
  if (base64.startsWith("R0lGOD")) return "image/gif";
  if (base64.startsWith("UklGR")) return "image/webp";
  return "image/png";
}

function encodeImage(part: IrImagePart): AnthropicImageBlock | undefined {
  if (part.data !== undefined) {
    return { type: "image", source: { type: "base64", media_type: part.mediaType ?? sniffImageType(part.data), data: part.data } };
  }
  if (part.url === undefined) return undefined;
  const inline = splitDataUrl(part.url);
  if (inline !== undefined) return { type: "image", source: { type: "base64", media_type: inline.mediaType, data: inline.data } };
  return { type: "image", source: { type: "url", url: part.url } };
}

/**
 * Anthropic rejects empty and whitespace-only text blocks ("text content blocks must be
 * non-empty"). Citations are not sent: the history's text is sent as text.
 */
function encodeText(part: IrTextPart): AnthropicTextBlock | undefined {
  if (part.text.trim() === "") return undefined;
  const block: AnthropicTextBlock = { type: "text", text: part.text };
  if (part.cacheControl !== undefined) block.cache_control = part.cacheControl;
  return block;
}

function encodeToolResult(part: IrToolResultPart): AnthropicToolResultBlock {
  const block: AnthropicToolResultBlock = { type: "tool_result", tool_use_id: part.callId };
  if (typeof part.output === "string") {
    if (part.output !== "") block.content = part.output;
  } else {
    // tool_result content accepts text and image blocks only.
    const content: Array<AnthropicTextBlock | AnthropicImageBlock> = [];
    for (const item of part.output) {
      const encoded = item.type === "text" ? encodeText(item) : encodeImage(item);
      if (encoded !== undefined) content.push(encoded);
    }
    if (content.length > 0) block.content = content;
  }
  if (part.isError === true) block.is_error = true;
  return block;
}

function encodePart(part: IrContentPart, path: string, warnings: IrWarning[]): AnthropicContentBlock | undefined {
  switch (part.type) {
    case "text":
      return encodeText(part);
    case "image":
      return encodeImage(part);
    case "file": {
      const title = part.filename === undefined ? {} : { title: part.filename };
      const mediaType = part.mediaType ?? "application/pdf";
      if (part.data !== undefined && mediaType.startsWith("image/")) return encodeImage({ type: "image", mediaType, data: part.data });
      if (part.data !== undefined && mediaType === "application/pdf") {
        return { type: "document", source: { type: "base64", media_type: mediaType, data: part.data }, ...title };
      }
      if (part.data !== undefined && mediaType.startsWith("text/")) {
        const text = Buffer.from(part.data, "base64").toString("utf8");
        return { type: "document", source: { type: "text", media_type: "text/plain", data: text }, ...title };
      }
      if (part.data === undefined && part.url !== undefined && mediaType === "application/pdf") {
        return { type: "document", source: { type: "url", url: part.url }, ...title };
      }
      warnings.push({ code: "dropped_content", field: path, message: `Anthropic documents accept PDF and plain text, not ${mediaType}` });
      return undefined;
    }
    case "reasoning": {
      // Thinking is replayed only with an Anthropic signature; anything else is rejected upstream.
      if (part.signatureProtocol === "anthropic-messages" && part.redactedData !== undefined) {
        return { type: "redacted_thinking", data: part.redactedData };
      }
      if (part.signatureProtocol === "anthropic-messages" && part.signature !== undefined) {
        return { type: "thinking", thinking: part.text, signature: part.signature };
      }
      warnings.push({ code: "dropped_content", field: path, message: "reasoning without an Anthropic signature cannot be sent to Anthropic" });
      return undefined;
    }
    case "tool_call":
      return { type: "tool_use", id: part.id, name: part.name, input: replayedArguments(part, path, warnings) };
    case "tool_result":
      return encodeToolResult(part);
    case "web_search":
      // A hosted search is not replayed (ir-content.ts): its encrypted results are Anthropic's own.
      return undefined;
  }
}

/**
 * IR messages -> Messages `system` texts and `messages`. Leading system messages fold
 * into the top-level system prompt; later ones stay in place as role "system".
 * Tool messages become user messages of `tool_result` blocks, and consecutive messages
 * of the same role are merged because the API requires alternating turns.
 */
export function encodeAnthropicMessages(
  messages: IrMessage[],
  warnings: IrWarning[],
): { leadingSystem: string[]; messages: AnthropicMessage[] } {
  const leadingSystem: string[] = [];
  const encoded: AnthropicMessage[] = [];
  messages.forEach((message, index) => {
    if (message.role === "system" && encoded.length === 0) {
      for (const part of message.content) if (part.type === "text") leadingSystem.push(part.text);
      return;
    }
    const role = message.role === "tool" ? "user" : message.role;
    const blocks: AnthropicContentBlock[] = [];
    message.content.forEach((part, partIndex) => {
      const block = encodePart(part, `messages[${index}].content[${partIndex}]`, warnings);
      if (block !== undefined) blocks.push(block);
    });
    if (blocks.length === 0) return;
    const previous = encoded[encoded.length - 1];
    if (previous !== undefined && previous.role === role) previous.content.push(...blocks);
    else encoded.push({ role, content: blocks });
  });
  // In a user turn the tool_result blocks must come before any other content.
  for (const message of encoded) {
    if (message.role !== "user" || !message.content.some((block) => block.type === "tool_result")) continue;
    message.content = [
      ...message.content.filter((block) => block.type === "tool_result"),
      ...message.content.filter((block) => block.type !== "tool_result"),
    ];
  }
  return { leadingSystem, messages: encoded };
}
