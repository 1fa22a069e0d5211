import { IrDecodeError, type IrContentPart, type IrMessage, type IrTextPart, type IrImagePart, type IrWarning } from "../../ir";
import { argumentsText, isRecord, requiredString, requireRecord } from "../openai-shared/read-fields";
import { decodeResponsesContent, decodeResponsesText } from "./decode-input-content";
import { reasoningPart, reasoningTextOf } from "./reasoning-item-ref";
import { carriedParts, toolResultFor } from "../shared/tool-result";

export interface DecodedInput {
  systemTexts: string[];
  messages: IrMessage[];
}

/**
 * Responses `input` -> IR messages. A string is one user message.
 * Items: `message` (the `type` may be omitted, as in EasyInputMessage), `function_call`,
 * `function_call_output`, `reasoning`. Consecutive assistant-side items (reasoning, message,
 * function_call) form one assistant turn, as they were produced. Other item types (hosted
 * tool calls, `item_reference`, …) are skipped with a warning.
 */
export function decodeResponsesInput(input: unknown, warnings: IrWarning[]): DecodedInput {
  if (typeof input === "string") return { systemTexts: [], messages: [{ role: "user", content: [{ type: "text", text: input }] }] };
  if (!Array.isArray(input)) throw new IrDecodeError("input is required and must be a string or an array of items");
  const systemTexts: string[] = [];
  const messages: IrMessage[] = [];
  const toolNames = new Map<string, string>();

  const appendAssistant = (part: IrContentPart): void => {
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === "assistant") last.content.push(part);
    else messages.push({ role: "assistant", content: [part] });
  };

  input.forEach((value, index) => {
    const path = `input[${index}]`;
    const item = requireRecord(value, path);
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    switch (type) {
      case "message":
        decodeMessageItem(item, path, warnings, { systemTexts, messages, appendAssistant });
        return;
      case "function_call": {
        const callId = requiredString(item.call_id, `${path}.call_id`);
        const name = requiredString(item.name, `${path}.name`);
        toolNames.set(callId, name);
        appendAssistant({ type: "tool_call", id: callId, name, arguments: argumentsText(item.arguments) });
        return;
      }
      case "function_call_output":
        messages.push({ role: "tool", content: [decodeCallOutput(item, path, warnings, toolNames)] });
        return;
      case "reasoning":
        appendAssistant(reasoningPart(reasoningTextOf(item), item.id, item.encrypted_content));
        return;
      default:
        if (typeof type !== "string") throw new IrDecodeError(`${path}.type must be a string`);
        warnings.push({ code: "dropped_content", field: path, message: `input item type "${type}" is not supported; skipped` });
    }
  });
  return { systemTexts, messages };
}

interface Sink {
  systemTexts: string[];
  messages: IrMessage[];
  appendAssistant: (part: IrContentPart) => void;
}

function decodeMessageItem(item: Record<string, unknown>, path: string, warnings: IrWarning[], sink: Sink): void {
  switch (item.role) {
    case "system":
    case "developer":
      sink.systemTexts.push(decodeResponsesText(item.content, `${path}.content`, warnings));
      return;
    case "user":
      sink.messages.push({ role: "user", content: decodeResponsesContent(item.content, `${path}.content`, warnings) });
      return;
    case "assistant":
      for (const part of decodeResponsesContent(item.content, `${path}.content`, warnings)) sink.appendAssistant(part);
      return;
    default:
      throw new IrDecodeError(
        typeof item.role === "string" ? `${path}.role "${item.role}" is not a known role` : `${path}.role is required`,
      );
  }
}

function decodeCallOutput(
  item: Record<string, unknown>,
  path: string,
  warnings: IrWarning[],
  toolNames: Map<string, string>,
): IrContentPart {
  const callId = item.call_id;
  if (typeof callId !== "string" || callId === "") throw new IrDecodeError(`${path}.call_id is required for a function_call_output`);
  let output: string | Array<IrTextPart | IrImagePart>;
  if (typeof item.output === "string") output = item.output;
  else if (Array.isArray(item.output)) {
    output = carriedParts(
      decodeResponsesContent(item.output, `${path}.output`, warnings),
      (part): part is IrTextPart | IrImagePart => part.type === "text" || part.type === "image",
      `${path}.output`,
      warnings,
      "tool results carry text and images only; other parts skipped",
    );
  } else if (isRecord(item.output)) output = JSON.stringify(item.output);
  else throw new IrDecodeError(`${path}.output must be a string or an array of content parts`);
  return toolResultFor(callId, output, toolNames);
}
