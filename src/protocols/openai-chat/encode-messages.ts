import type { IrContentPart, IrMessage, IrRequest, IrWarning } from "../../ir";
import { audioFormatOf, toDataUrl } from "../shared/data-url";
import { dropped, systemMessageText } from "../openai-shared/system-message-text";

type ChatMessage = Record<string, unknown>;

/**
 * IR -> Chat `messages[]`. The system prompt becomes a leading
 * `system` message; each tool result becomes its own `tool` message. Reasoning is not
 * sent: OpenAI's chat API rejects unknown message fields such as `reasoning_content`, and
 * an upstream that wants it back (DeepSeek thinking mode) cannot be told apart here — so
 * it is dropped with a warning rather than risking a 400 on every multi-turn request.
 */
export function encodeChatMessages(request: IrRequest, warnings: IrWarning[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.system !== undefined && request.system !== "") messages.push({ role: "system", content: request.system });
  request.messages.forEach((message, index) => {
    const path = `messages[${index}]`;
    switch (message.role) {
      case "system":
        messages.push({ role: "system", content: systemMessageText(message, path, warnings) });
        return;
      case "user":
        messages.push({ role: "user", content: encodeUserContent(message.content, path, warnings) });
        return;
      case "assistant":
        messages.push(encodeAssistantMessage(message, path, warnings));
        return;
      case "tool":
        messages.push(...encodeToolMessages(message, path, warnings));
        return;
    }
  });
  return messages;
}

function encodeUserContent(parts: IrContentPart[], path: string, warnings: IrWarning[]): string | ChatMessage[] {
  const only = parts[0];
  if (parts.length === 1 && only !== undefined && only.type === "text") return only.text;
  const wire: ChatMessage[] = [];
  parts.forEach((part, index) => {
    const partPath = `${path}.content[${index}]`;
    switch (part.type) {
      case "text":
        wire.push({ type: "text", text: part.text });
        return;
      case "image": {
        const url = part.data !== undefined ? toDataUrl(part.mediaType, part.data) : part.url;
        if (url === undefined) return dropped(warnings, partPath, "image without data or url");
        wire.push({ type: "image_url", image_url: part.detail !== undefined ? { url, detail: part.detail } : { url } });
        return;
      }
      case "file": {
        if (part.data === undefined) return dropped(warnings, partPath, "chat completions accept files only as inline data");
        const format = audioFormatOf(part.mediaType);
        if (format !== undefined) {
          wire.push({ type: "input_audio", input_audio: { data: part.data, format } });
          return;
        }
        const file: Record<string, string> = { file_data: toDataUrl(part.mediaType, part.data) };
        if (part.filename !== undefined) file.filename = part.filename;
        wire.push({ type: "file", file });
        return;
      }
      default:
        return dropped(warnings, partPath, `a ${part.type} part cannot appear in a chat user message`);
    }
  });
  return wire;
}

function encodeAssistantMessage(message: IrMessage, path: string, warnings: IrWarning[]): ChatMessage {
  let text = "";
  const toolCalls: ChatMessage[] = [];
  message.content.forEach((part, index) => {
    const partPath = `${path}.content[${index}]`;
    // Citations stay behind: the history's text is sent as text.
    if (part.type === "text") text += part.text;
    // A hosted search the provider ran is its own record, not replayable as chat history (ir-content.ts).
    else if (part.type === "web_search") return;
    else if (part.type === "tool_call") {
      toolCalls.push({ id: part.id, type: "function", function: { name: part.name, arguments: part.arguments } });
    } else if (part.type === "reasoning") {
      dropped(warnings, partPath, "assistant reasoning cannot be sent to a chat completions upstream");
    } else dropped(warnings, partPath, `a ${part.type} part cannot appear in a chat assistant message`);
  });
  const wire: ChatMessage = { role: "assistant" };
  // `content` may be omitted only when tool calls are present (chat/create#messages).
  if (text !== "" || toolCalls.length === 0) wire.content = text;
  if (toolCalls.length > 0) wire.tool_calls = toolCalls;
  return wire;
}

function encodeToolMessages(message: IrMessage, path: string, warnings: IrWarning[]): ChatMessage[] {
  const wire: ChatMessage[] = [];
  message.content.forEach((part, index) => {
    const partPath = `${path}.content[${index}]`;
    if (part.type !== "tool_result") return dropped(warnings, partPath, `a ${part.type} part cannot appear in a tool message`);
    if (part.isError === true) {
      warnings.push({ code: "unsupported_field", field: `${partPath}.isError`, message: "chat tool messages have no error flag; sent as a normal result" });
    }
    let content: string | ChatMessage[];
    if (typeof part.output === "string") content = part.output;
    else {
      // Chat tool messages accept text parts only (chat/create#tool-message).
      content = [];
      for (const item of part.output) {
        if (item.type === "text") content.push({ type: "text", text: item.text });
        else dropped(warnings, `${partPath}.output`, "images in tool results cannot be sent to a chat completions upstream");
      }
    }
    wire.push({ role: "tool", tool_call_id: part.callId, content });
  });
  return wire;
}
