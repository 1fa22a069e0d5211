import { IrDecodeError, type IrRequest, type IrTool, type IrToolChoice } from "../../ir";
import { decodeFunctionDefinition, definitionOf, type DefinitionNesting } from "./decode-definitions";
import { optionalBoolean, requireRecord, type JsonObject } from "./read-fields";

/**
 * `tools`, `tool_choice`, `parallel_tool_calls` and `store`, read the same way from both
 * OpenAI wires (chat/create#tools, responses/create#tools). Tools other than functions
 * (Chat `custom`, Responses' hosted `web_search_preview`, `file_search`, `mcp`, …) and
 * choices the IR cannot express (`allowed_tools`, a hosted tool) ride in extras, so they
 * reach only an upstream of the same wire; other encoders warn that they were dropped.
 */
export function decodeToolFields(body: JsonObject, request: IrRequest, extraFields: JsonObject, nesting: DefinitionNesting): void {
  if (body.tools !== undefined && body.tools !== null) {
    const { tools, others } = decodeTools(body.tools, nesting);
    if (tools.length > 0) request.tools = tools;
    if (others.length > 0) extraFields.tools = others;
  }
  if (body.tool_choice !== undefined && body.tool_choice !== null) {
    const toolChoice = decodeToolChoice(body.tool_choice, nesting);
    if (toolChoice !== undefined) request.toolChoice = toolChoice;
    else extraFields.tool_choice = body.tool_choice;
  }
  const parallelToolCalls = optionalBoolean(body.parallel_tool_calls, "parallel_tool_calls");
  if (parallelToolCalls !== undefined) request.parallelToolCalls = parallelToolCalls;
  const store = optionalBoolean(body.store, "store");
  if (store !== undefined) request.store = store;
}

function decodeTools(value: unknown, nesting: DefinitionNesting): { tools: IrTool[]; others: unknown[] } {
  if (!Array.isArray(value)) throw new IrDecodeError("tools must be an array");
  const tools: IrTool[] = [];
  const others: unknown[] = [];
  value.forEach((entry, index) => {
    const tool = requireRecord(entry, `tools[${index}]`);
    if (typeof tool.type !== "string") throw new IrDecodeError(`tools[${index}].type must be a string`);
    if (tool.type !== "function") {
      others.push(tool);
      return;
    }
    const { definition, path } = definitionOf(tool, "function", `tools[${index}]`, nesting);
    tools.push(decodeFunctionDefinition(definition, path));
  });
  return { tools, others };
}

/** Returns undefined for a valid choice the IR cannot express. */
function decodeToolChoice(value: unknown, nesting: DefinitionNesting): IrToolChoice | undefined {
  if (value === "auto" || value === "required" || value === "none") return { type: value };
  if (typeof value === "string") throw new IrDecodeError(`tool_choice "${value}" must be auto, required, none or a function`);
  const choice = requireRecord(value, "tool_choice");
  if (typeof choice.type !== "string") throw new IrDecodeError("tool_choice.type must be a string");
  if (choice.type !== "function") return undefined;
  const { definition, path } = definitionOf(choice, "function", "tool_choice", nesting);
  if (typeof definition.name !== "string" || definition.name === "") throw new IrDecodeError(`${path}.name must be a non-empty string`);
  return { type: "tool", name: definition.name };
}
