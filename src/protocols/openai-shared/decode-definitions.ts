import { IrDecodeError, type IrResponseFormat, type IrTool } from "../../ir";
import { isRecord, optionalBoolean, optionalString, requireRecord, type JsonObject } from "./read-fields";

/**
 * Definitions both OpenAI protocols spell the same way: a function tool's
 * `{name, description?, parameters?, strict?}` and a JSON-schema output format
 * `{name, description?, schema?, strict?}`. Chat wraps each under the name of its type
 * (`{type: "function", function: {…}}`, `{type: "json_schema", json_schema: {…}}`);
 * Responses writes it flat in the typed entry itself.
 */
export type DefinitionNesting = "nested" | "flat";

/** The definition a typed entry carries, with its path. */
export function definitionOf(entry: JsonObject, type: string, path: string, nesting: DefinitionNesting): { definition: JsonObject; path: string } {
  if (nesting === "flat") return { definition: entry, path };
  return { definition: requireRecord(entry[type], `${path}.${type}`), path: `${path}.${type}` };
}

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

function decodeJsonSchemaFormat(spec: Record<string, unknown>, path: string): IrResponseFormat {
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

/** The output format: Chat `response_format`, Responses `text.format` (`path`). */
export function decodeResponseFormat(value: unknown, path: string, nesting: DefinitionNesting): IrResponseFormat {
  const format = requireRecord(value, path);
  switch (format.type) {
    case "text":
      return { type: "text" };
    case "json_object":
      return { type: "json_object" };
    case "json_schema": {
      const spec = definitionOf(format, "json_schema", path, nesting);
      return decodeJsonSchemaFormat(spec.definition, spec.path);
    }
    default:
      throw new IrDecodeError(`${path}.type must be text, json_object or json_schema`);
  }
}
