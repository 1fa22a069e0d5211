import { IrDecodeError } from "../../ir";
import { isRecord, setOwn, type JsonObject } from "../shared/json-fields";

/**
 * Gemini's `Schema` is an OpenAPI 3.0 subset (https://ai.google.dev/api/caching#Schema) and
 * rejects unknown keywords with a 400, so JSON Schema from other protocols is rewritten:
 * only these keys survive; `$schema`, `additionalProperties`, `strict`, `$id`, `allOf`,
 * `not`, … are dropped (the first of `examples` becomes `example`).
 */
const ALLOWED_KEYS = new Set([
  "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties", "required",
  "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering",
  "default", "items", "minimum", "maximum",
]);

/** `$ref` chains deeper than this are cut (recursive schemas cannot be inlined). */
const MAX_REF_DEPTH = 8;

/**
 * Most schema nodes one request's schema may expand to. Inlining multiplies: nine `$defs`
 * whose eight properties each `$ref` the next expand a 2 KB schema into 8^8 nodes (seconds
 * of CPU on the request thread), so the expansion is counted and refused past this.
 */
export const MAX_SCHEMA_NODES = 10_000;

type Definitions = Record<string, unknown>;

interface Expansion {
  definitions: Definitions;
  nodes: number;
}

function resolveRef(ref: string, definitions: Definitions): unknown {
  for (const prefix of ["#/$defs/", "#/definitions/"]) {
    if (!ref.startsWith(prefix)) continue;
    // Own keys only: "#/$defs/__proto__" names the client's definition or none, never Object.prototype.
    const name = ref.slice(prefix.length);
    return Object.hasOwn(definitions, name) ? definitions[name] : undefined;
  }
  return undefined;
}

/** JSON Schema says "may be null" with a null enum member or a `{type: "null"}` branch; Gemini with `nullable`. */
function foldNullIntoNullable(result: JsonObject): void {
  if (Array.isArray(result.enum) && result.enum.includes(null)) {
    result.enum = result.enum.filter((value) => value !== null);
    result.nullable = true;
  }
  if (Array.isArray(result.anyOf) && result.anyOf.length > 1) {
    const branches = result.anyOf.filter((branch) => !(isRecord(branch) && branch.type === "null" && Object.keys(branch).length === 1));
    if (branches.length < result.anyOf.length && branches.length > 0) {
      result.anyOf = branches;
      result.nullable = true;
    }
  }
}

function sanitizeNode(node: unknown, expansion: Expansion, depth: number): JsonObject {
  if (!isRecord(node)) return {};
  if (++expansion.nodes > MAX_SCHEMA_NODES) {
    throw new IrDecodeError(`schema expands to more than ${MAX_SCHEMA_NODES} nodes once its $refs are inlined for this upstream`);
  }
  const { definitions } = expansion;
  if (typeof node.$ref === "string") {
    // Gemini has no references: local $defs are inlined (the referring node's own keys win).
    const { $ref, ...rest } = node;
    const target = depth < MAX_REF_DEPTH ? resolveRef($ref, definitions) : undefined;
    return sanitizeNode({ ...(isRecord(target) ? target : { type: "object" }), ...rest }, expansion, depth + 1);
  }
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (!ALLOWED_KEYS.has(key)) continue;
    if (key === "properties" && isRecord(value)) {
      const properties: JsonObject = {};
      for (const [name, schema] of Object.entries(value)) setOwn(properties, name, sanitizeNode(schema, expansion, depth));
      result.properties = properties;
    } else if (key === "items") {
      result.items = sanitizeNode(value, expansion, depth);
    } else if (key === "anyOf" && Array.isArray(value)) {
      result.anyOf = value.map((item) => sanitizeNode(item, expansion, depth));
    } else if (key === "type" && Array.isArray(value)) {
      // JSON Schema `type: ["string", "null"]` is OpenAPI `type: "string", nullable: true`.
      const types = value.filter((item) => item !== "null");
      if (types[0] !== undefined) result.type = types[0];
      if (types.length < value.length) result.nullable = true;
    } else {
      result[key] = value;
    }
  }
  if (node.const !== undefined && result.enum === undefined && typeof node.const === "string") result.enum = [node.const];
  foldNullIntoNullable(result);
  if (Array.isArray(node.examples) && node.examples.length > 0 && result.example === undefined) result.example = node.examples[0];
  // JSON Schema's order is the key order of `properties`; Gemini orders alphabetically unless told.
  const names = isRecord(result.properties) ? Object.keys(result.properties) : [];
  if (result.propertyOrdering === undefined && names.some((name, index) => index > 0 && (names[index - 1] ?? "") > name)) {
    result.propertyOrdering = names;
  }
  // `required` may only name declared properties.
  if (Array.isArray(result.required)) {
    const declared = isRecord(result.properties) ? result.properties : {};
    result.required = result.required.filter((name) => typeof name === "string" && Object.hasOwn(declared, name));
    if ((result.required as unknown[]).length === 0) delete result.required;
  }
  return result;
}

/**
 * JSON Schema -> Gemini Schema; undefined for an object schema without properties (Gemini
 * rejects those). Throws IrDecodeError when inlining would pass MAX_SCHEMA_NODES.
 */
export function sanitizeGeminiSchema(schema: JsonObject): JsonObject | undefined {
  const definitions: Definitions = { ...(isRecord(schema.definitions) ? schema.definitions : {}), ...(isRecord(schema.$defs) ? schema.$defs : {}) };
  const result = sanitizeNode(schema, { definitions, nodes: 0 }, 0);
  const properties = result.properties;
  if (result.type === "object" && (!isRecord(properties) || Object.keys(properties).length === 0)) return undefined;
  return result;
}
