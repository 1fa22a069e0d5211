import type { IrContentPart, IrMessage, IrRequest, IrWarning } from "../../ir";
import { audioFormatOf, toDataUrl } from "../shared/data-url";
import { dropped, systemMessageText } from "../openai-shared/system-message-text";
import { unpackReasoningRef } from "./reasoning-item-ref";

type Item = Record<string, unknown>;

/**
 * IR messages -> Responses `input` items. An assistant turn becomes
 * its items in order: reasoning items, a `message` with `output_text` parts, `function_call`
 * items. Reasoning is replayable only when it came from a Responses upstream (it needs the
 * item id); foreign reasoning is dropped with a warning.
 */
export function encodeResponsesInput(request: IrRequest, warnings: IrWarning[]): Item[] {
  const items: Item[] = [];
  request.messages.forEach((message, index) => {
    const path = `messages[${index}]`;
    switch (message.role) {
      case "system":
        items.push({ type: "message", role: "system", content: systemMessageText(message, path, warnings) });
        return;
      case "user":
        items.push({ type: "message", role: "user", content: encodeUserParts(message.content, path, warnings) });
        return;
      case "assistant":
        items.push(...encodeAssistantItems(message, path, warnings));
        return;
      case "tool":
        message.content.forEach((part, partIndex) => {
          const partPath = `${path}.content[${partIndex}]`;
          if (part.type !== "tool_result") return dropped(warnings, partPath, `a ${part.type} part cannot appear in a tool message`);
          if (part.isError === true) {
            warnings.push({ code: "unsupported_field", field: `${partPath}.isError`, message: "function_call_output has no error flag; sent as a normal result" });
          }
          const output = typeof part.output === "string" ? part.output : encodeUserParts(part.output, `${partPath}.output`, warnings);
          items.push({ type: "function_call_output", call_id: part.callId, output });
        });
        return;
    }
  });
  return items;
}

function encodeUserParts(parts: IrContentPart[], path: string, warnings: IrWarning[]): Item[] {
  const wire: Item[] = [];
  parts.forEach((part, index) => {
    const partPath = `${path}[${index}]`;
    switch (part.type) {
      case "text":
        wire.push({ type: "input_text", text: part.text });
        return;
      case "image": {
        const url = part.data !== undefined ? toDataUrl(part.mediaType, part.data) : part.url;
        if (url === undefined) return dropped(warnings, partPath, "image without data or url");
        wire.push({ type: "input_image", image_url: url, detail: part.detail ?? "auto" });
        return;
      }
      case "file": {
        const format = audioFormatOf(part.mediaType);
        if (format !== undefined && part.data !== undefined) {
          wire.push({ type: "input_audio", input_audio: { data: part.data, format } });
          return;
        }
        const file: Item = { type: "input_file" };
        if (part.data !== undefined) file.file_data = toDataUrl(part.mediaType, part.data);
        else if (part.url !== undefined) file.file_url = part.url;
        else return dropped(warnings, partPath, "file without data or url");
        if (part.filename !== undefined) file.filename = part.filename;
        wire.push(file);
        return;
      }
      default:
        return dropped(warnings, partPath, `a ${part.type} part cannot appear in user content`);
    }
  });
  return wire;
}

function encodeAssistantItems(message: IrMessage, path: string, warnings: IrWarning[]): Item[] {
  const items: Item[] = [];
  let texts: Item[] = [];
  const flushText = (): void => {
    if (texts.length > 0) items.push({ type: "message", role: "assistant", content: texts });
    texts = [];
  };
  message.content.forEach((part, index) => {
    const partPath = `${path}.content[${index}]`;
    if (part.type === "text") {
      // Citations stay behind: the history's text is sent as text.
      if (part.text !== "") texts.push({ type: "output_text", text: part.text, annotations: [] });
      return;
    }
    // A hosted search the provider ran is not replayed (ir-content.ts): a web_search_call item
    // of another vendor's search would name a call OpenAI never made.
    if (part.type === "web_search") return;
    flushText();
    if (part.type === "tool_call") {
      items.push({ type: "function_call", call_id: part.id, name: part.name, arguments: part.arguments });
    } else if (part.type === "reasoning") {
      const ref = unpackReasoningRef(part);
      if (ref === undefined) return dropped(warnings, partPath, "reasoning from another protocol cannot be replayed to a Responses upstream");
      const item: Item = { type: "reasoning", id: ref.id, summary: part.text === "" ? [] : [{ type: "summary_text", text: part.text }] };
      if (ref.encryptedContent !== undefined) item.encrypted_content = ref.encryptedContent;
      items.push(item);
    } else dropped(warnings, partPath, `a ${part.type} part cannot appear in an assistant turn`);
  });
  flushText();
  return items;
}
