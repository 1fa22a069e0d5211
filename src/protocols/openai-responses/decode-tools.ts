import { IrDecodeError, type IrResponseFormat, type IrTool, type IrToolChoice } from "../../ir";
import { decodeFunctionDefinition, decodeJsonSchemaFormat } from "../openai-shared/decode-definitions";
import { requireRecord } from "../openai-shared/read-fields";

/**
 * Responses `tools` are flat: `{type:"function", name, description?, parameters, strict?}`
 * (platform.openai.com/docs/api-reference/responses/create#tools). Hosted tools
 * (`web_search_preview`, `file_search`, `mcp`, …) have no IR form; they are returned
 * separately and ride in extras, so only a Responses upstream receives them.
 */
export function decodeResponsesTools(value: unknown): { tools: IrTool[]; hosted: unknown[] } {
  if (!Array.isArray(value)) throw new IrDecodeError("tools must be an array");
  const tools: IrTool[] = [];
  const hosted: unknown[] = [];
  value.forEach((entry, index) => {
    const path = `tools[${index}]`;
    const tool = requireRecord(entry, path);
    if (tool.type === "function") tools.push(decodeFunctionDefinition(tool, path));
    else if (typeof tool.type === "string") hosted.push(tool);
    else throw new IrDecodeError(`${path}.type must be a string`);
  });
  return { tools, hosted };
}

/** Returns undefined for a valid choice the IR cannot express (hosted tool, `allowed_tools`). */
export function decodeResponsesToolChoice(value: unknown): IrToolChoice | undefined {
  if (value === "auto" || value === "required" || value === "none") return { type: value };
  if (typeof value === "string") throw new IrDecodeError(`tool_choice "${value}" must be auto, required, none or a function`);
  const choice = requireRecord(value, "tool_choice");
  if (choice.type === "function") {
    if (typeof choice.name !== "string" || choice.name === "") throw new IrDecodeError("tool_choice.name must be a non-empty string");
    return { type: "tool", name: choice.name };
  }
  if (typeof choice.type !== "string") throw new IrDecodeError("tool_choice.type must be a string");
  return undefined;
}

/** `text.format`: `{type:"text"} | {type:"json_object"} | {type:"json_schema", name, schema, …}`. */
export function decodeResponsesFormat(value: unknown): IrResponseFormat {
  const format = requireRecord(value, "text.format");
  switch (format.type) {
    case "text":
      return { type: "text" };
    case "json_object":
      return { type: "json_object" };
    case "json_schema":
      return decodeJsonSchemaFormat(format, "text.format");
    default:
      throw new IrDecodeError("text.format.type must be text, json_object or json_schema");
  }
}
