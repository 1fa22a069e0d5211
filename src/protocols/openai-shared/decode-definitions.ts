import { IrDecodeError, type IrResponseFormat, type IrTool } from "../../ir";
import { isRecord, optionalBoolean, optionalString, requireRecord } from "./read-fields";

/**
 * Definitions both OpenAI protocols spell the same way: a function tool's
 * `{name, description?, parameters?, strict?}` (wrapped in `function` by Chat, flat in
 * Responses) and a JSON-schema output format (Chat `response_format.json_schema`,
 * Responses `text.format`).
 */
export function decodeFunctionDefinition(fn: Record<string, unknown>, path: string): IrTool {
  const name = fn.name;
  if (typeof name !== "string" || name === "") throw new IrDecodeError(`${path}.name must be a non-empty string`);
  const tool: IrTool = {
    name,
    // A function without parameters takes none; other protocols need an explicit empty schema.
    parameters:
      fn.parameters === undefined || fn.parameters === null
        ? { type: "object", properties: {} }
        : requireRecord(fn.parameters, `${path}.parameters`),
  };
  const description = optionalString(fn.description, `${path}.description`);
  if (description !== undefined) tool.description = description;
  const strict = optionalBoolean(fn.strict, `${path}.strict`);
  if (strict !== undefined) tool.strict = strict;
  return tool;
}

/** `{name, description?, schema?, strict?}`, the same in Chat `json_schema` and Responses `text.format`. */
export function decodeJsonSchemaFormat(spec: Record<string, unknown>, path: string): IrResponseFormat {
  const name = spec.name;
  if (typeof name !== "string" || name === "") throw new IrDecodeError(`${path}.name must be a non-empty string`);
  if (spec.schema !== undefined && spec.schema !== null && !isRecord(spec.schema)) {
    throw new IrDecodeError(`${path}.schema must be an object`);
  }
  const format: IrResponseFormat = { type: "json_schema", name, schema: isRecord(spec.schema) ? spec.schema : {} };
  const description = optionalString(spec.description, `${path}.description`);
  if (description !== undefined) format.description = description;
  const strict = optionalBoolean(spec.strict, `${path}.strict`);
  if (strict !== undefined) format.strict = strict;
  return format;
}
