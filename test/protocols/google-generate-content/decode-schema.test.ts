import { describe, expect, test } from "bun:test";
import { IrDecodeError, type IrRequest, type IrWarning } from "../../../src/ir";
import { googleGenerateContentCodec as codec } from "../../../src/protocols/google-generate-content";
import { MAX_SCHEMA_DEPTH, decodeGeminiSchema } from "../../../src/protocols/google-generate-content/decode-schema";

type Json = Record<string, unknown>;

function convert(schema: Json): { schema: Json; warnings: IrWarning[] } {
  const warnings: IrWarning[] = [];
  return { schema: decodeGeminiSchema(schema, "responseSchema", warnings), warnings };
}

/** Every `type` in a JSON Schema tree, and every key, to check nothing OpenAPI-only is left. */
function walk(schema: unknown, visit: (node: Json) => void): void {
  if (Array.isArray(schema)) for (const item of schema) walk(item, visit);
  else if (typeof schema === "object" && schema !== null) {
    visit(schema as Json);
    for (const value of Object.values(schema)) walk(value, visit);
  }
}

/** A Gemini Schema as the @google/genai SDK writes it: upper-case types, nullable, propertyOrdering, int64 counts as strings. */
const GEMINI_RECIPE_SCHEMA: Json = {
  type: "OBJECT",
  title: "Recipe",
  description: "A recipe",
  properties: {
    name: { type: "STRING", minLength: "1", maxLength: 80, pattern: "^[A-Z]", example: "Pancakes" },
    servings: { type: "INTEGER", format: "int32", minimum: 1, maximum: "12", nullable: true },
    diet: { type: "STRING", format: "enum", enum: ["vegan", "vegetarian"], nullable: true },
    ingredients: {
      type: "ARRAY",
      minItems: "1",
      maxItems: "50",
      items: {
        type: "OBJECT",
        properties: { quantity: { type: "NUMBER", default: 1 }, item: { type: "STRING" } },
        propertyOrdering: ["item", "quantity"],
        required: ["item"],
      },
    },
    note: { anyOf: [{ type: "STRING" }, { type: "INTEGER" }], nullable: true },
    extras: { type: "OBJECT", minProperties: "0", maxProperties: "3", properties: { spicy: { type: "BOOLEAN" } } },
    anything: { type: "TYPE_UNSPECIFIED", description: "free form" },
  },
  propertyOrdering: ["name", "ingredients", "servings", "diet", "note", "extras", "anything"],
  required: ["name", "ingredients"],
};

const JSON_RECIPE_SCHEMA: Json = {
  type: "object",
  title: "Recipe",
  description: "A recipe",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 80, pattern: "^[A-Z]", examples: ["Pancakes"] },
    ingredients: {
      type: "array",
      minItems: 1,
      maxItems: 50,
      items: {
        type: "object",
        properties: { item: { type: "string" }, quantity: { type: "number", default: 1 } },
        required: ["item"],
      },
    },
    servings: { type: ["integer", "null"], format: "int32", minimum: 1, maximum: 12 },
    diet: { type: ["string", "null"], enum: ["vegan", "vegetarian", null] },
    note: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] },
    extras: { type: "object", minProperties: 0, maxProperties: 3, properties: { spicy: { type: "boolean" } } },
    anything: { description: "free form" },
  },
  required: ["name", "ingredients"],
};

describe("Gemini Schema -> JSON Schema", () => {
  test("types, nullable, propertyOrdering, examples and int64 counts become JSON Schema at every depth", () => {
    const { schema, warnings } = convert(GEMINI_RECIPE_SCHEMA);
    expect(schema).toEqual(JSON_RECIPE_SCHEMA);
    // Key order carries the ordering (toEqual ignores it).
    expect(Object.keys(schema.properties as Json)).toEqual(["name", "ingredients", "servings", "diet", "note", "extras", "anything"]);
    const items = ((schema.properties as Json).ingredients as Json).items as Json;
    expect(Object.keys(items.properties as Json)).toEqual(["item", "quantity"]);
    walk(schema, (node) => {
      expect(node.nullable).toBeUndefined();
      expect(node.propertyOrdering).toBeUndefined();
      expect(node.example).toBeUndefined();
      for (const type of [node.type].flat()) if (typeof type === "string") expect(type).toBe(type.toLowerCase());
    });
    expect(warnings).toEqual([]);
  });

  test("nullable without a type, enum or anyOf adds nothing (any value already admits null); nullable: false is dropped", () => {
    expect(convert({ description: "x", nullable: true }).schema).toEqual({ description: "x" });
    expect(convert({ type: "STRING", nullable: false }).schema).toEqual({ type: "string" });
    expect(convert({ enum: ["a"], nullable: true }).schema).toEqual({ enum: ["a", null] });
    expect(convert({ type: "NULL" }).schema).toEqual({ type: "null" });
  });

  test("propertyOrdering naming an undeclared property is a warning; unlisted properties keep their place after the listed ones", () => {
    const { schema, warnings } = convert({ type: "OBJECT", properties: { a: { type: "STRING" }, b: { type: "STRING" }, c: { type: "STRING" } }, propertyOrdering: ["c", "ghost", "a"] });
    expect(Object.keys(schema.properties as Json)).toEqual(["c", "a", "b"]);
    expect(warnings.map((warning) => [warning.code, warning.field])).toEqual([["unsupported_value", "responseSchema.propertyOrdering"]]);
  });

  test("malformed schemas are refused with the path of the bad field", () => {
    const refused = (schema: Json) => {
      try {
        convert(schema);
      } catch (error) {
        expect(error).toBeInstanceOf(IrDecodeError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refused({ type: "OBJECT", properties: { a: { type: "TEXT" } } })).toStartWith("responseSchema.properties.a.type must be one of");
    expect(refused({ type: "ARRAY", items: "STRING" })).toBe("responseSchema.items must be a schema object");
    expect(refused({ type: "ARRAY", minItems: "one" })).toBe("responseSchema.minItems must be an integer");
    expect(refused({ type: "OBJECT", properties: [] })).toBe("responseSchema.properties must be an object");
    expect(refused({ anyOf: {} })).toBe("responseSchema.anyOf must be an array");
    expect(refused({ type: "OBJECT", properties: {}, propertyOrdering: "a" })).toBe("responseSchema.propertyOrdering must be an array of strings");
  });

  test(`nesting deeper than ${MAX_SCHEMA_DEPTH} levels is a clear decode error, not a stack overflow, even 10,000 levels deep`, () => {
    let deep: Json = { type: "STRING" };
    for (let level = 0; level < 10_000; level++) deep = { anyOf: [deep] };
    expect(() => convert(deep)).toThrow(new IrDecodeError(`responseSchema${".anyOf[0]".repeat(MAX_SCHEMA_DEPTH + 1)} nests schemas more than ${MAX_SCHEMA_DEPTH} levels deep`));
    let allowed: Json = { type: "STRING" };
    for (let level = 0; level < MAX_SCHEMA_DEPTH; level++) allowed = { type: "ARRAY", items: allowed };
    expect(convert(allowed).schema.type).toBe("array");
  });
});

describe("Gemini request decoding carries JSON Schema in the IR", () => {
  const base = { model: "m", contents: [{ role: "user", parts: [{ text: "hi" }] }] };

  test("responseSchema and every declaration's parameters are converted; the *JsonSchema fields are kept as they are", () => {
    const jsonSchema = { type: "object", properties: { x: { type: ["string", "null"] } }, additionalProperties: false };
    const { value, warnings } = codec.decodeRequest({
      ...base,
      tools: [
        {
          functionDeclarations: [
            { name: "save", parameters: GEMINI_RECIPE_SCHEMA, response: { type: "OBJECT", properties: { ok: { type: "BOOLEAN" } } } },
            { name: "raw", parametersJsonSchema: jsonSchema },
          ],
        },
      ],
      generationConfig: { responseMimeType: "application/json", responseSchema: GEMINI_RECIPE_SCHEMA },
    });
    expect(value.tools?.map((tool) => tool.parameters)).toEqual([JSON_RECIPE_SCHEMA, jsonSchema]);
    expect(value.responseFormat).toEqual({ type: "json_schema", name: "response", schema: JSON_RECIPE_SCHEMA });
    expect(warnings.map((warning) => warning.field)).toEqual(["tools[0].functionDeclarations[0].response"]);
    const withJson = codec.decodeRequest({ ...base, generationConfig: { responseMimeType: "application/json", responseJsonSchema: jsonSchema } }).value;
    expect(withJson.responseFormat).toEqual({ type: "json_schema", name: "response", schema: jsonSchema });
  });

  test("a Gemini Schema and a JSON Schema for the same thing at once are refused, as Gemini refuses them", () => {
    const schema = { type: "OBJECT", properties: { a: { type: "STRING" } } };
    expect(() =>
      codec.decodeRequest({ ...base, generationConfig: { responseMimeType: "application/json", responseSchema: schema, responseJsonSchema: schema } }),
    ).toThrow("generationConfig accepts responseSchema or responseJsonSchema, not both");
    expect(() => codec.decodeRequest({ ...base, tools: [{ functionDeclarations: [{ name: "f", parameters: schema, parametersJsonSchema: schema }] }] })).toThrow(
      "tools[0].functionDeclarations[0] accepts parameters or parametersJsonSchema, not both",
    );
  });

  test("a property named __proto__ stays a property", () => {
    const schema = JSON.parse('{"type":"OBJECT","properties":{"__proto__":{"type":"STRING"},"b":{"type":"INTEGER"}}}') as Json;
    const converted = convert(schema).schema;
    expect(JSON.stringify(converted)).toBe('{"type":"object","properties":{"__proto__":{"type":"string"},"b":{"type":"integer"}}}');
  });

  test("a bad nested schema is a decode error naming the declaration", () => {
    const bad = { ...base, tools: [{ functionDeclarations: [{ name: "f", parameters: { type: "OBJECT", properties: { a: { type: "WORD" } } } }] }] };
    expect(() => codec.decodeRequest(bad)).toThrow("tools[0].functionDeclarations[0].parameters.properties.a.type must be one of");
  });

  test("Gemini -> IR -> Gemini keeps the schema's meaning: nullable, enum, anyOf, ordering, examples and counts", () => {
    const decoded = codec.decodeRequest({
      ...base,
      tools: [{ functionDeclarations: [{ name: "save", parameters: GEMINI_RECIPE_SCHEMA }] }],
      generationConfig: { responseMimeType: "application/json", responseSchema: GEMINI_RECIPE_SCHEMA },
    }).value;
    const { value: body } = codec.encodeRequest(decoded as IrRequest, { providerModelId: "gemini-2.5-flash", stream: false });
    const expected = {
      type: "object",
      title: "Recipe",
      description: "A recipe",
      properties: {
        name: { type: "string", minLength: 1, maxLength: 80, pattern: "^[A-Z]", example: "Pancakes" },
        ingredients: {
          type: "array",
          minItems: 1,
          maxItems: 50,
          items: { type: "object", properties: { item: { type: "string" }, quantity: { type: "number", default: 1 } }, required: ["item"] },
        },
        servings: { type: "integer", nullable: true, format: "int32", minimum: 1, maximum: 12 },
        diet: { type: "string", nullable: true, enum: ["vegan", "vegetarian"] },
        note: { anyOf: [{ type: "string" }, { type: "integer" }], nullable: true },
        extras: { type: "object", minProperties: 0, maxProperties: 3, properties: { spicy: { type: "boolean" } } },
        anything: { description: "free form" },
      },
      propertyOrdering: ["name", "ingredients", "servings", "diet", "note", "extras", "anything"],
      required: ["name", "ingredients"],
    };
    expect((body.generationConfig as Json).responseSchema).toEqual(expected);
    expect(((body.tools as Json[])[0]?.functionDeclarations as Json[])[0]?.parameters).toEqual(expected);
  });
});
