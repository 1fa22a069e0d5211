import { IrDecodeError, type IrResponseFormat, type IrTool, type IrToolChoice } from "../../ir";
import { decodeFunctionDefinition, decodeJsonSchemaFormat } from "../openai-shared/decode-definitions";
import { requireRecord } from "../openai-shared/read-fields";

/**
 * Chat `tools`, `tool_choice` and `response_format`
 * (platform.openai.com/docs/api-reference/chat/create#tools). Non-function tools
 * (e.g. `custom`) and non-canonical tool choices (e.g. `allowed_tools`) are returned
 * separately so they ride in extras and survive same-protocol traffic.
 */
export function decodeChatTools(value: unknown): { tools: IrTool[]; foreign: unknown[] } {
  if (!Array.isArray(value)) throw new IrDecodeError("tools must be an array");
  const tools: IrTool[] = [];
  const foreign: unknown[] = [];
  value.forEach((entry, index) => {
    const path = `tools[${index}]`;
    const tool = requireRecord(entry, path);
    if (tool.type !== "function") {
      if (typeof tool.type !== "string") throw new IrDecodeError(`${path}.type must be a string`);
      foreign.push(tool);
      return;
    }
    tools.push(decodeFunctionDefinition(requireRecord(tool.function, `${path}.function`), `${path}.function`));
  });
  return { tools, foreign };
}

/** Returns undefined for a valid choice the IR cannot express (kept in extras by the caller). */
export function decodeChatToolChoice(value: unknown): IrToolChoice | undefined {
  if (value === "auto" || value === "required" || value === "none") return { type: value };
  if (typeof value === "string") throw new IrDecodeError(`tool_choice "${value}" must be auto, required, none or a function`);
  const choice = requireRecord(value, "tool_choice");
  if (choice.type === "function") {
    const fn = requireRecord(choice.function, "tool_choice.function");
    const name = fn.name;
    if (typeof name !== "string" || name === "") throw new IrDecodeError("tool_choice.function.name must be a non-empty string");
    return { type: "tool", name };
  }
  if (typeof choice.type !== "string") throw new IrDecodeError("tool_choice.type must be a string");
  return undefined;
}

export function decodeChatResponseFormat(value: unknown): IrResponseFormat {
  const format = requireRecord(value, "response_format");
  switch (format.type) {
    case "text":
      return { type: "text" };
    case "json_object":
      return { type: "json_object" };
    case "json_schema": {
      const spec = requireRecord(format.json_schema, "response_format.json_schema");
      return decodeJsonSchemaFormat(spec, "response_format.json_schema");
    }
    default:
      throw new IrDecodeError("response_format.type must be text, json_object or json_schema");
  }
}
