import type { IrContentPart, IrImagePart, IrFilePart, IrMessage, IrToolResultPart, IrWarning } from "../../ir";
import { splitDataUrl } from "../shared/data-url";
import { isRecord, replayedArguments, type JsonObject } from "../shared/json-fields";
import { parseJsonWithinDepth } from "../shared/json-depth";
import type { GeminiContent, GeminiPart } from "./wire-types";

function encodeMedia(part: IrImagePart | IrFilePart): GeminiPart | undefined {
  const fallbackType = part.type === "image" ? "image/png" : "application/octet-stream";
  if (part.data !== undefined) return { inlineData: { mimeType: part.mediaType ?? fallbackType, data: part.data } };
  if (part.url === undefined) return undefined;
  const inline = splitDataUrl(part.url);
  if (inline !== undefined) return { inlineData: { mimeType: inline.mediaType, data: inline.data } };
  return { fileData: part.mediaType === undefined ? { fileUri: part.url } : { mimeType: part.mediaType, fileUri: part.url } };
}

/**
 * Tool output -> functionResponse.response, which must be an object: JSON objects go as
 * they are, anything else is wrapped `{result: …}`; errors use the
 * `{error: …}` key the FunctionResponse docs reserve for failures.
 */
function encodeFunctionResponse(part: IrToolResultPart, path: string, warnings: IrWarning[]): JsonObject {
  let text: string;
  if (typeof part.output === "string") text = part.output;
  else {
    const texts: string[] = [];
    for (const item of part.output) {
      if (item.type === "text") texts.push(item.text);
      else warnings.push({ code: "dropped_content", field: path, message: "images in tool results are not sent to Gemini" });
    }
    text = texts.join("\n");
  }
  let value: unknown = text;
  try {
    // Past the depth limit it stays text: a deeper object would overflow the stack when serialized.
    const parsed: unknown = parseJsonWithinDepth(text);
    if (isRecord(parsed)) value = parsed;
  } catch {
    // plain text output
  }
  if (part.isError === true) return { error: value };
  return isRecord(value) ? value : { result: value };
}

function encodePart(part: IrContentPart, path: string, warnings: IrWarning[]): GeminiPart | undefined {
  switch (part.type) {
    case "text":
      // Citations stay behind: the history's text is sent as text.
      return part.text === "" ? undefined : { text: part.text };
    case "image":
    case "file":
      return encodeMedia(part);
    case "reasoning":
      if (part.signatureProtocol === "google-generate-content" && part.signature !== undefined) {
        return { text: part.text, thought: true, thoughtSignature: part.signature };
      }
      warnings.push({ code: "dropped_content", field: path, message: "reasoning without a Gemini thought signature is not replayed to Gemini" });
      return undefined;
    case "tool_call": {
      const encoded: GeminiPart = { functionCall: { name: part.name, args: replayedArguments(part, path, warnings) } };
      if (part.signature !== undefined) encoded.thoughtSignature = part.signature;
      return encoded;
    }
    case "tool_result":
      return { functionResponse: { name: part.toolName ?? part.callId, response: encodeFunctionResponse(part, path, warnings) } };
    case "web_search":
      // A hosted search is not replayed (ir-content.ts); grounding is the provider's, per answer.
      return undefined;
  }
}

/**
 * IR messages -> `contents` plus the system texts found among them (Gemini has only one
 * systemInstruction, so mid-conversation system messages join it, with a warning).
 * assistant -> "model"; tool results -> "user" functionResponse parts; consecutive
 * contents of one role are merged so parallel function responses share one content,
 * as Gemini expects one response per call in the turn after the calls.
 */
export function encodeGeminiContents(messages: IrMessage[], warnings: IrWarning[]): { system: string[]; contents: GeminiContent[] } {
  const system: string[] = [];
  const contents: GeminiContent[] = [];
  messages.forEach((message, index) => {
    if (message.role === "system") {
      if (contents.length > 0) {
        warnings.push({ code: "moved_content", field: `messages[${index}]`, message: "Gemini has no mid-conversation system messages; moved into systemInstruction" });
      }
      for (const part of message.content) if (part.type === "text") system.push(part.text);
      return;
    }
    const role = message.role === "assistant" ? "model" : "user";
    const parts: GeminiPart[] = [];
    // A Gemini signature on an ordinary text part arrives as an empty signed reasoning part; re-attach it.
    let carriedSignature: string | undefined;
    message.content.forEach((part, partIndex) => {
      if (part.type === "reasoning" && part.text === "" && part.signatureProtocol === "google-generate-content" && part.signature !== undefined) {
        carriedSignature = part.signature;
        return;
      }
      const encoded = encodePart(part, `messages[${index}].content[${partIndex}]`, warnings);
      if (encoded === undefined) return;
      if (carriedSignature !== undefined && encoded.thoughtSignature === undefined) encoded.thoughtSignature = carriedSignature;
      carriedSignature = undefined;
      parts.push(encoded);
    });
    if (carriedSignature !== undefined) parts.push({ text: "", thoughtSignature: carriedSignature });
    if (parts.length === 0) return;
    const previous = contents[contents.length - 1];
    if (previous !== undefined && previous.role === role) previous.parts.push(...parts);
    else contents.push({ role, parts });
  });
  return { system, contents };
}
