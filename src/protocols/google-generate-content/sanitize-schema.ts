import { isRecord, type JsonObject } from "../shared/json-fields";

/**
 * Gemini's `Schema` is an OpenAPI 3.0 subset (https://ai.google.dev/api/caching#Schema) and
 * rejects unknown keywords with a 400, so JSON Schema from other protocols is rewritten:
 * only these keys survive; `$schema`, `additionalProperties`, `strict`, `$id`, `examples`,
 * `allOf`, `not`, … are dropped.
 */
const ALLOWED_KEYS = new Set([
  "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties", "required",
  "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering",
  "default", "items", "minimum", "maximum",
]);

/** `$ref` chains deeper than this are cut (recursive schemas cannot be inlined). */
const MAX_REF_DEPTH = 8;

type Definitions = Record<string, unknown>;

function resolveRef(ref: string, definitions: Definitions): unknown {
  for (const prefix of ["#/$defs/", "#/definitions/"]) {
    if (ref.startsWith(prefix)) return definitions[ref.slice(prefix.length)];
  }
  return undefined;
}

function sanitizeNode(node: unknown, definitions: Definitions, depth: number): JsonObject {
  if (!isRecord(node)) return {};
  if (typeof node.$ref === "string") {
    // Gemini has no references: local $defs are inlined (the referring node's own keys win).
    const { $ref, ...rest } = node;
    const target = depth < MAX_REF_DEPTH ? resolveRef($ref, definitions) : undefined;
    return sanitizeNode({ ...(isRecord(target) ? target : { type: "object" }), ...rest }, definitions, depth + 1);
  }
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (!ALLOWED_KEYS.has(key)) continue;
    if (key === "properties" && isRecord(value)) {
      const properties: JsonObject = {};
      for (const [name, schema] of Object.entries(value)) properties[name] = sanitizeNode(schema, definitions, depth);
      result.properties = properties;
    } else if (key === "items") {
      result.items = sanitizeNode(value, definitions, depth);
    } else if (key === "anyOf" && Array.isArray(value)) {
      result.anyOf = value.map((item) => sanitizeNode(item, definitions, depth));
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
  // `required` may only name declared properties.
  if (Array.isArray(result.required)) {
    const declared = isRecord(result.properties) ? result.properties : {};
    result.required = result.required.filter((name) => typeof name === "string" && Object.hasOwn(declared, name));
    if ((result.required as unknown[]).length === 0) delete result.required;
  }
  return result;
}

/** JSON Schema -> Gemini Schema; undefined for an object schema without properties (Gemini rejects those). */
export function sanitizeGeminiSchema(schema: JsonObject): JsonObject | undefined {
  const definitions: Definitions = { ...(isRecord(schema.definitions) ? schema.definitions : {}), ...(isRecord(schema.$defs) ? schema.$defs : {}) };
  const result = sanitizeNode(schema, definitions, 0);
  const properties = result.properties;
  if (result.type === "object" && (!isRecord(properties) || Object.keys(properties).length === 0)) return undefined;
  return result;
}
