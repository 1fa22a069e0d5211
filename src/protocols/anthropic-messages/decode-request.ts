import { decodeRequestHead, finishRequest } from "../shared/decode-request-head";
import {
  IrDecodeError,
  type Encoded,
  type IrReasoningEffort,
  type IrRequest,
  type IrResponseFormat,
  type IrTool,
  type IrToolChoice,
} from "../../ir";
import { setParam } from "../shared/set-param";
import { decodeAnthropicMessages } from "./decode-content";
import { isRecord, readBoolean, readTokenCount, readNumber, readObject, readString, requireString, readStringArray, type JsonObject } from "../shared/json-fields";

/** Top-level fields mapped into the IR; everything else rides in `extras`. */
const MAPPED_FIELDS = new Set([
  "model", "models", "messages", "system", "max_tokens", "temperature", "top_p", "top_k", "stop_sequences",
  "stream", "tools", "tool_choice", "thinking", "output_config", "output_format",
]);

const EFFORTS = new Set<IrReasoningEffort>(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

function decodeSystem(value: unknown, request: IrRequest): void {
  if (value === undefined || value === null) return;
  if (typeof value === "string") {
    request.system = value;
    return;
  }
  if (!Array.isArray(value)) throw new IrDecodeError("system must be a string or an array of text blocks");
  const texts: string[] = [];
  value.forEach((block, index) => {
    if (!isRecord(block) || block.type !== "text" || typeof block.text !== "string") {
      throw new IrDecodeError(`system[${index}] must be a text block`);
    }
    texts.push(block.text);
    // The cache breakpoint of the last block caches the whole system prompt, which is what the IR keeps.
    if (index === value.length - 1 && block.cache_control !== undefined && block.cache_control !== null) {
      request.systemCacheControl = block.cache_control;
    }
  });
  request.system = texts.join("\n");
}

/** Client tools map to IrTool; versioned server tools (`web_search_20250305`, …) only exist on this wire. */
function decodeTools(value: unknown, serverTools: JsonObject[]): IrTool[] {
  if (!Array.isArray(value)) throw new IrDecodeError("tools must be an array");
  const tools: IrTool[] = [];
  value.forEach((tool, index) => {
    const path = `tools[${index}]`;
    if (!isRecord(tool)) throw new IrDecodeError(`${path} must be an object`);
    if (tool.type !== undefined && tool.type !== null && tool.type !== "custom") {
      serverTools.push(tool);
      return;
    }
    const name = requireString(tool, "name", `${path}.name`);
    const schema = readObject(tool, "input_schema", `${path}.input_schema`);
    if (schema === undefined) throw new IrDecodeError(`${path}.input_schema must be an object`);
    const irTool: IrTool = { name, parameters: schema };
    const description = readString(tool, "description", `${path}.description`);
    if (description !== undefined) irTool.description = description;
    const strict = readBoolean(tool, "strict", `${path}.strict`);
    if (strict !== undefined) irTool.strict = strict;
    tools.push(irTool);
  });
  return tools;
}

function decodeToolChoice(value: JsonObject, request: IrRequest): void {
  let choice: IrToolChoice;
  switch (value.type) {
    case "auto":
      choice = { type: "auto" };
      break;
    case "any":
      choice = { type: "required" };
      break;
    case "none":
      choice = { type: "none" };
      break;
    case "tool": {
      const name = readString(value, "name", "tool_choice.name");
      if (name === undefined) throw new IrDecodeError("tool_choice.name must be a string");
      choice = { type: "tool", name };
      break;
    }
    default:
      throw new IrDecodeError('tool_choice.type must be "auto", "any", "none" or "tool"');
  }
  request.toolChoice = choice;
  const disableParallel = readBoolean(value, "disable_parallel_tool_use", "tool_choice.disable_parallel_tool_use");
  if (disableParallel !== undefined) request.parallelToolCalls = !disableParallel;
}

function decodeOutputFormat(format: JsonObject, path: string): IrResponseFormat {
  if (format.type !== "json_schema") throw new IrDecodeError(`${path}.type must be "json_schema"`);
  const schema = readObject(format, "schema", `${path}.schema`);
  if (schema === undefined) throw new IrDecodeError(`${path}.schema must be an object`);
  // Anthropic formats are unnamed; "response" is the name OpenAI wires require.
  return { type: "json_schema", name: "response", schema };
}

/** Anthropic Messages request body -> IR. */
export function decodeAnthropicRequest(value: unknown): Encoded<IrRequest> {
  const { body, request, warnings } = decodeRequestHead(value, "messages", (turns, warnings) =>
    decodeAnthropicMessages(turns, { warnings, toolNames: new Map() }),
  );
  decodeSystem(body.system, request);

  const params = request.params;
  setParam(params, "maxTokens", readTokenCount(body, "max_tokens"));
  setParam(params, "temperature", readNumber(body, "temperature"));
  setParam(params, "topP", readNumber(body, "top_p"));
  setParam(params, "topK", readTokenCount(body, "top_k", "top_k", 0));
  setParam(params, "stop", readStringArray(body, "stop_sequences"));

  const extras: JsonObject = {};
  const serverTools: JsonObject[] = [];
  if (body.tools !== undefined && body.tools !== null) {
    const tools = decodeTools(body.tools, serverTools);
    if (tools.length > 0) request.tools = tools;
  }
  if (serverTools.length > 0) extras.tools = serverTools;
  const toolChoice = readObject(body, "tool_choice");
  if (toolChoice !== undefined) decodeToolChoice(toolChoice, request);

  const thinking = readObject(body, "thinking");
  if (thinking?.type === "enabled") {
    const budget = readTokenCount(thinking, "budget_tokens", "thinking.budget_tokens", 0);
    if (budget === undefined) throw new IrDecodeError("thinking.budget_tokens must be an integer");
    params.thinkingBudgetTokens = budget;
  } else if (thinking !== undefined && thinking.type !== "disabled") {
    extras.thinking = thinking; // adaptive and newer modes have no IR equivalent
  }

  const outputConfig = readObject(body, "output_config");
  const format = outputConfig === undefined ? undefined : readObject(outputConfig, "format", "output_config.format");
  if (format !== undefined) request.responseFormat = decodeOutputFormat(format, "output_config.format");
  const legacyFormat = readObject(body, "output_format");
  if (legacyFormat !== undefined && format === undefined) request.responseFormat = decodeOutputFormat(legacyFormat, "output_format");
  const effort = outputConfig === undefined ? undefined : readString(outputConfig, "effort", "output_config.effort");
  if (effort !== undefined) {
    if (!EFFORTS.has(effort as IrReasoningEffort)) throw new IrDecodeError("output_config.effort is not a known effort level");
    params.reasoningEffort = effort as IrReasoningEffort;
  }

  return finishRequest(body, MAPPED_FIELDS, extras, { request, warnings, protocol: "anthropic-messages" });
}
