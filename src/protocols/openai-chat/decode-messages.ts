import { IrDecodeError, type IrContentPart, type IrMessage, type IrTextPart, type IrWarning } from "../../ir";
import { argumentsText, isRecord, optionalString, requiredString, requireRecord } from "../openai-shared/read-fields";
import { carriedParts, toolResultFor } from "../shared/tool-result";
import { decodeChatContent, decodeChatTextContent } from "./decode-content-parts";

export interface DecodedChatMessages {
  system?: string;
  messages: IrMessage[];
}

/**
 * Chat `messages[]` -> IR: `system`/`developer` messages are joined with
 * "\n" into the system prompt; `tool` (and the deprecated `function`) messages become tool
 * results; an unknown role is a 400 because the role mapping must be total.
 */
export function decodeChatMessages(value: unknown, warnings: IrWarning[]): DecodedChatMessages {
  if (!Array.isArray(value)) throw new IrDecodeError("messages is required and must be an array");
  if (value.length === 0) throw new IrDecodeError("messages must contain at least one message");
  const systemTexts: string[] = [];
  const messages: IrMessage[] = [];
  // Tool messages carry only the call id; the name comes from the assistant turn that made the call.
  const toolNames = new Map<string, string>();

  value.forEach((entry, index) => {
    const path = `messages[${index}]`;
    const message = requireRecord(entry, path);
    if (message.name !== undefined && message.role !== "function") {
      warnings.push({ code: "unsupported_field", field: `${path}.name`, message: "participant names are not carried; dropped" });
    }
    switch (message.role) {
      case "system":
      case "developer":
        systemTexts.push(decodeChatTextContent(message.content, `${path}.content`));
        return;
      case "user":
        messages.push({ role: "user", content: decodeChatContent(message.content, `${path}.content`, warnings) });
        return;
      case "assistant":
        messages.push(decodeAssistantMessage(message, path, warnings, toolNames));
        return;
      case "tool":
        messages.push(decodeToolMessage(message, path, warnings, toolNames));
        return;
      case "function": {
        // Deprecated function-calling: the function name is the only link to the call.
        const name = requiredString(message.name, `${path}.name`);
        const output = decodeChatTextContent(message.content, `${path}.content`);
        messages.push({ role: "tool", content: [{ type: "tool_result", callId: name, toolName: name, output }] });
        return;
      }
      default:
        throw new IrDecodeError(
          typeof message.role === "string" ? `${path}.role "${message.role}" is not a known role` : `${path}.role is required`,
        );
    }
  });

  const result: DecodedChatMessages = { messages };
  if (systemTexts.length > 0) result.system = systemTexts.join("\n");
  return result;
}

function decodeAssistantMessage(
  message: Record<string, unknown>,
  path: string,
  warnings: IrWarning[],
  toolNames: Map<string, string>,
): IrMessage {
  const content: IrContentPart[] = [];
  // `reasoning_content` is the DeepSeek-style vendor extension, accepted on input.
  const reasoning = optionalString(message.reasoning_content, `${path}.reasoning_content`);
  if (reasoning !== undefined && reasoning !== "") content.push({ type: "reasoning", text: reasoning });
  content.push(...decodeChatContent(message.content, `${path}.content`, warnings));
  const refusal = optionalString(message.refusal, `${path}.refusal`);
  if (refusal !== undefined && refusal !== "") content.push({ type: "text", text: refusal });

  if (message.tool_calls !== undefined && message.tool_calls !== null) {
    if (!Array.isArray(message.tool_calls)) throw new IrDecodeError(`${path}.tool_calls must be an array`);
    message.tool_calls.forEach((value, index) => {
      const callPath = `${path}.tool_calls[${index}]`;
      const call = requireRecord(value, callPath);
      const id = requiredString(call.id, `${callPath}.id`);
      if (call.type !== undefined && call.type !== "function") {
        warnings.push({ code: "dropped_content", field: callPath, message: `tool call type "${String(call.type)}" is not supported; skipped` });
        return;
      }
      const fn = requireRecord(call.function, `${callPath}.function`);
      const name = requiredString(fn.name, `${callPath}.function.name`);
      toolNames.set(id, name);
      content.push({ type: "tool_call", id, name, arguments: argumentsText(fn.arguments) });
    });
  }
  if (isRecord(message.function_call)) {
    // Deprecated single `function_call`; the name doubles as the call id.
    const name = requiredString(message.function_call.name, `${path}.function_call.name`);
    toolNames.set(name, name);
    content.push({ type: "tool_call", id: name, name, arguments: argumentsText(message.function_call.arguments) });
  }
  return { role: "assistant", content };
}

function decodeToolMessage(
  message: Record<string, unknown>,
  path: string,
  warnings: IrWarning[],
  toolNames: Map<string, string>,
): IrMessage {
  const callId = message.tool_call_id;
  if (typeof callId !== "string" || callId === "") {
    throw new IrDecodeError(`${path}.tool_call_id is required for a tool message`);
  }
  const output = Array.isArray(message.content)
    ? carriedParts(
        decodeChatContent(message.content, `${path}.content`, warnings),
        (part): part is IrTextPart => part.type === "text",
        `${path}.content`,
        warnings,
        "tool messages carry text parts only; other parts skipped",
      )
    : decodeChatTextContent(message.content, `${path}.content`);
  return { role: "tool", content: [toolResultFor(callId, output, toolNames)] };
}
