import { IrDecodeError, type IrWarning } from "../../ir";
import { isRecord, setOwn, type JsonObject } from "../shared/json-fields";

/**
 * Gemini `Schema` (an OpenAPI 3.0 subset, https://ai.google.dev/api/caching#Schema) ->
 * JSON Schema, the form the IR carries and the other upstreams take:
 *
 * - `type` is an enum (`OBJECT`, `STRING`, …, case-insensitive here) and becomes the
 *   lower-case JSON Schema type; `TYPE_UNSPECIFIED` means no type at all.
 * - `nullable: true` becomes a type union with "null" (and a null enum member, or a
 *   `{type: "null"}` branch of an `anyOf`, so the schema still accepts null).
 * - `propertyOrdering` becomes the key order of `properties`; the keyword itself is not
 *   JSON Schema (OpenAI's strict mode rejects unknown keywords).
 * - `example` becomes `examples: [example]`; `format: "enum"` (redundant with `enum`) is dropped.
 * - int64 counts (`minItems`, `maxLength`, …) may arrive as JSON strings and become numbers.
 *
 * The Gemini encoder converts back (sanitize-schema.ts), so a Gemini client's schema
 * reaches a Gemini upstream with the same meaning.
 */

/** Nesting beyond this is refused with a 400 rather than walked (no real schema comes close). */
export const MAX_SCHEMA_DEPTH = 64;

const TYPES: Record<string, string | undefined> = {
  STRING: "string",
  NUMBER: "number",
  INTEGER: "integer",
  BOOLEAN: "boolean",
  ARRAY: "array",
  OBJECT: "object",
  NULL: "null",
  TYPE_UNSPECIFIED: undefined,
};

const COUNT_KEYS = new Set(["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"]);
const BOUND_KEYS = new Set(["minimum", "maximum"]);
/** Keys this converter rewrites; every other key is copied as it is. */
const HANDLED_KEYS = new Set(["type", "nullable", "format", "enum", "properties", "propertyOrdering", "items", "anyOf", "example"]);

interface SchemaContext {
  warnings: IrWarning[];
}

function convertType(value: unknown, path: string): string[] {
  const names = Array.isArray(value) ? value : [value];
  const types: string[] = [];
  for (const name of names) {
    const key = typeof name === "string" ? name.toUpperCase() : undefined;
    if (key === undefined || !Object.hasOwn(TYPES, key)) {
      throw new IrDecodeError(`${path} must be one of ${Object.keys(TYPES).join(", ")}`);
    }
    const type = TYPES[key];
    if (type !== undefined && !types.includes(type)) types.push(type);
  }
  return types;
}

/** An int64 or double field; proto JSON allows both as strings. */
function convertNumber(value: unknown, path: string, integer: boolean): number {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isFinite(number) || (integer && !Number.isInteger(number))) {
    throw new IrDecodeError(`${path} must be ${integer ? "an integer" : "a number"}`);
  }
  return number;
}

function orderedPropertyNames(node: JsonObject, properties: JsonObject, path: string, context: SchemaContext): string[] {
  const ordering = node.propertyOrdering;
  const names = Object.keys(properties);
  if (ordering === undefined) return names;
  if (!Array.isArray(ordering) || !ordering.every((name) => typeof name === "string")) {
    throw new IrDecodeError(`${path}.propertyOrdering must be an array of strings`);
  }
  const listed = ordering.filter((name) => Object.hasOwn(properties, name));
  if (listed.length < ordering.length) {
    context.warnings.push({
      code: "unsupported_value",
      field: `${path}.propertyOrdering`,
      message: "propertyOrdering names properties the schema does not declare; they were ignored",
    });
  }
  return [...new Set([...listed, ...names])];
}

function convertChild(value: unknown, path: string, depth: number, context: SchemaContext): JsonObject {
  if (!isRecord(value)) throw new IrDecodeError(`${path} must be a schema object`);
  return convertNode(value, path, depth + 1, context);
}

function convertNode(node: JsonObject, path: string, depth: number, context: SchemaContext): JsonObject {
  if (depth > MAX_SCHEMA_DEPTH) throw new IrDecodeError(`${path} nests schemas more than ${MAX_SCHEMA_DEPTH} levels deep`);
  const result: JsonObject = {};
  const types = node.type === undefined ? [] : convertType(node.type, `${path}.type`);
  const nullable = node.nullable === true && !types.includes("null");
  if (types.length > 0) {
    const all = nullable ? [...types, "null"] : types;
    result.type = all.length === 1 ? all[0] : all;
  }
  for (const [key, value] of Object.entries(node)) {
    if (COUNT_KEYS.has(key)) result[key] = convertNumber(value, `${path}.${key}`, true);
    else if (BOUND_KEYS.has(key)) result[key] = convertNumber(value, `${path}.${key}`, false);
    else if (!HANDLED_KEYS.has(key)) setOwn(result, key, value);
  }
  if (node.format !== undefined && node.format !== "enum") result.format = node.format;
  if (node.example !== undefined && result.examples === undefined) result.examples = [node.example];
  if (node.enum !== undefined) {
    if (!Array.isArray(node.enum)) throw new IrDecodeError(`${path}.enum must be an array`);
    result.enum = node.nullable === true && !node.enum.includes(null) ? [...node.enum, null] : node.enum;
  }
  if (node.properties !== undefined) {
    if (!isRecord(node.properties)) throw new IrDecodeError(`${path}.properties must be an object`);
    const properties: JsonObject = {};
    for (const name of orderedPropertyNames(node, node.properties, path, context)) {
      setOwn(properties, name, convertChild(node.properties[name], `${path}.properties.${name}`, depth, context));
    }
    result.properties = properties;
  }
  if (node.items !== undefined) result.items = convertChild(node.items, `${path}.items`, depth, context);
  if (node.anyOf !== undefined) {
    if (!Array.isArray(node.anyOf)) throw new IrDecodeError(`${path}.anyOf must be an array`);
    const branches = node.anyOf.map((branch, index) => convertChild(branch, `${path}.anyOf[${index}]`, depth, context));
    // Without a type of its own, a nullable anyOf accepts null through a branch.
    if (nullable && types.length === 0 && !branches.some((branch) => branch.type === "null")) branches.push({ type: "null" });
    result.anyOf = branches;
  }
  return result;
}

/** One Gemini schema (`responseSchema`, a declaration's `parameters`) as JSON Schema; `path` names it in errors. */
export function decodeGeminiSchema(schema: JsonObject, path: string, warnings: IrWarning[]): JsonObject {
  return convertNode(schema, path, 0, { warnings });
}
