/**
 * Request translation across every client × upstream pair (4 × 4, same-protocol included):
 * a client body in protocol A goes through decodeClientRequest and encodeUpstreamRequest,
 * and the assertions read protocol B's wire fields. Each feature either arrives on B's
 * wire or is named in a warning — never silently dropped.
 */
import { describe, expect, test } from "bun:test";
import { IrDecodeError, PROTOCOL_IDS, type IrWarning, type ProtocolId } from "../../src/ir";
import { encodeUpstreamRequest } from "../../src/translation/translate-request";
import {
  CLIENT_MODEL,
  CLIENT_PARAMS,
  PNG_BASE64,
  clientBody,
  clientHasCallIds,
  decodeClientBody,
  type ConversationSpec,
  type Json,
  type ParamsSpec,
  type ToolChoiceSpec,
  type ToolSpec,
} from "./support/client-bodies";
import { readUpstreamBody, type SeenItem } from "./support/upstream-readers";

const UPSTREAM_MODEL = "upstream-model-2025";

const PAIRS: Array<[ProtocolId, ProtocolId]> = PROTOCOL_IDS.flatMap((client) => PROTOCOL_IDS.map((upstream): [ProtocolId, ProtocolId] => [client, upstream]));

interface Translated {
  body: Json;
  decodeWarnings: IrWarning[];
  encodeWarnings: IrWarning[];
  warnings: IrWarning[];
}

function translateBody(client: ProtocolId, upstream: ProtocolId, body: Json, stream = false): Translated {
  const decoded = decodeClientBody(client, body);
  const encoded = encodeUpstreamRequest(upstream, decoded.request, UPSTREAM_MODEL, stream);
  return {
    body: JSON.parse(encoded.body) as Json,
    decodeWarnings: decoded.warnings,
    encodeWarnings: encoded.warnings,
    warnings: [...decoded.warnings, ...encoded.warnings],
  };
}

function translate(client: ProtocolId, upstream: ProtocolId, spec: ConversationSpec, stream = false): Translated {
  return translateBody(client, upstream, clientBody(client, spec), stream);
}

function record(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A warning that names one of `names` in its field (or, failing that, its message). */
function warned(warnings: IrWarning[], names: string[]): boolean {
  return warnings.some((warning) => names.some((name) => (warning.field ?? "").includes(name) || warning.message.includes(name)));
}

// ------------------------------------------------------------------ fixtures

const WEATHER_TOOL: ToolSpec = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { location: { type: "string", description: "City name" } }, required: ["location"] },
};
const TIME_TOOL: ToolSpec = {
  name: "get_time",
  description: "Local time in a timezone",
  parameters: { type: "object", properties: { timezone: { type: "string" } }, required: ["timezone"] },
};

const SYSTEM_PARTS = ["You are a terse travel assistant.", "Always state units."];

/** Multi-turn agent history: image, assistant text + two parallel calls, two results, an answer, a follow-up. */
const HISTORY: ConversationSpec = {
  system: SYSTEM_PARTS,
  turns: [
    {
      role: "user",
      parts: [{ text: "What's the weather in Paris and Tokyo? Here is a photo." }, { image: { mediaType: "image/png", data: PNG_BASE64 } }],
    },
    {
      role: "assistant",
      text: "Checking both cities.",
      calls: [
        { id: "call_paris", name: "get_weather", args: { location: "Paris" } },
        { id: "call_tokyo", name: "get_weather", args: { location: "Tokyo" } },
      ],
    },
    {
      role: "tool",
      results: [
        { id: "call_paris", name: "get_weather", output: "18°C, light rain" },
        { id: "call_tokyo", name: "get_weather", output: "25°C, sunny" },
      ],
    },
    { role: "assistant", text: "Paris: 18°C and rain. Tokyo: 25°C and sun." },
    { role: "user", parts: [{ text: "And what time is it in Tokyo?" }] },
  ],
  tools: [WEATHER_TOOL, TIME_TOOL],
};

/** What every upstream must see for HISTORY, in wire order, ids and names aside. */
function expectedHistoryItems(): SeenItem[] {
  return [
    { kind: "user_text", text: "What's the weather in Paris and Tokyo? Here is a photo." },
    { kind: "image", mediaType: "image/png", data: PNG_BASE64 },
    { kind: "assistant_text", text: "Checking both cities." },
    { kind: "call", id: "call_paris", name: "get_weather", args: { location: "Paris" } },
    { kind: "call", id: "call_tokyo", name: "get_weather", args: { location: "Tokyo" } },
    { kind: "result", id: "call_paris", name: "get_weather", output: "18°C, light rain" },
    { kind: "result", id: "call_tokyo", name: "get_weather", output: "25°C, sunny" },
    { kind: "assistant_text", text: "Paris: 18°C and rain. Tokyo: 25°C and sun." },
    { kind: "user_text", text: "And what time is it in Tokyo?" },
  ];
}

/** Gemini has no call ids (it answers by name); elsewhere results carry no name on the wire. */
function comparable(items: SeenItem[], upstream: ProtocolId, keepIds: boolean): SeenItem[] {
  return items.map((item) => {
    if (item.kind === "call") {
      const { id, ...rest } = item;
      return keepIds && upstream !== "google-generate-content" && id !== undefined ? { ...rest, id } : rest;
    }
    if (item.kind === "result") {
      const { id, name, ...rest } = item;
      const out: SeenItem = { ...rest };
      if (keepIds && upstream !== "google-generate-content" && id !== undefined) out.id = id;
      if (upstream === "google-generate-content" && name !== undefined) out.name = name;
      return out;
    }
    return item;
  });
}

const EXPECTED_ROLES: Record<ProtocolId, string[]> = {
  "openai-chat": ["user", "assistant", "tool", "tool", "assistant", "user"],
  "openai-responses": ["user", "assistant", "function_call", "function_call", "function_call_output", "function_call_output", "assistant", "user"],
  // Anthropic and Gemini need alternating turns: both tool results share one user turn.
  "anthropic-messages": ["user", "assistant", "user", "assistant", "user"],
  "google-generate-content": ["user", "model", "user", "model", "user"],
};

// ------------------------------------------------------------ system + history

describe("system prompt and multi-turn history reach every upstream", () => {
  for (const [client, upstream] of PAIRS) {
    test(`${client} → ${upstream}: the joined system prompt lands in ${upstream}'s system slot`, () => {
      const { body } = translate(client, upstream, HISTORY);
      const joined = SYSTEM_PARTS.join("\n");
      expect(readUpstreamBody(upstream, body).system).toBe(joined);
      if (upstream === "openai-chat") {
        expect(list(body.messages)[0]).toEqual({ role: "system", content: joined });
      } else if (upstream === "openai-responses") {
        expect(body.instructions).toBe(joined);
        expect(list(body.input).some((item) => record(item).role === "system" || record(item).role === "developer")).toBe(false);
      } else if (upstream === "anthropic-messages") {
        expect(body.system).toBe(joined);
        expect(list(body.messages).every((message) => record(message).role !== "system")).toBe(true);
      } else {
        expect(body.systemInstruction).toEqual({ parts: [{ text: joined }] });
      }
    });

    test(`${client} → ${upstream}: every turn (image, text, parallel calls, results, answer, follow-up) arrives in order with no warnings`, () => {
      const translated = translate(client, upstream, HISTORY);
      const seen = readUpstreamBody(upstream, translated.body);
      const keepIds = clientHasCallIds(client);
      expect(comparable(seen.items, upstream, keepIds)).toEqual(comparable(expectedHistoryItems(), upstream, keepIds));
      expect(seen.roles).toEqual(EXPECTED_ROLES[upstream]);
      expect(translated.warnings).toEqual([]);
      expect(translated.body.model === undefined || translated.body.model === UPSTREAM_MODEL).toBe(true);
    });

    test(`${client} → ${upstream}: tool results point at their calls (ids kept where both sides have ids, Gemini by name)`, () => {
      const seen = readUpstreamBody(upstream, translate(client, upstream, HISTORY).body);
      const calls = seen.items.filter((item): item is Extract<SeenItem, { kind: "call" }> => item.kind === "call");
      const results = seen.items.filter((item): item is Extract<SeenItem, { kind: "result" }> => item.kind === "result");
      expect(calls).toHaveLength(2);
      expect(results).toHaveLength(2);
      if (upstream === "google-generate-content") {
        // functionResponse.name = the tool name, answered in call order.
        expect(results.map((result) => result.name)).toEqual(["get_weather", "get_weather"]);
        return;
      }
      const callIds = calls.map((call) => call.id);
      expect(new Set(callIds).size).toBe(2);
      expect(results.map((result) => result.id)).toEqual(callIds);
      if (clientHasCallIds(client)) expect(callIds).toEqual(["call_paris", "call_tokyo"]);
      for (const id of callIds) expect(id).toMatch(/^[A-Za-z0-9_-]+$/); // Anthropic's tool_use id pattern
    });

    test(`${client} → ${upstream}: URL images are carried as URLs (Gemini: fileData) or reported`, () => {
      const spec: ConversationSpec = {
        turns: [{ role: "user", parts: [{ text: "Describe this." }, { imageUrl: "https://example.com/cat.png", mediaType: "image/png" }] }],
      };
      const translated = translate(client, upstream, spec);
      const images = readUpstreamBody(upstream, translated.body).items.filter((item) => item.kind === "image");
      if (images.length === 0) {
        expect(translated.warnings.some((warning) => warning.code === "dropped_content")).toBe(true);
        return;
      }
      expect(images).toEqual([{ kind: "image", url: "https://example.com/cat.png" }]);
      if (upstream === "google-generate-content") {
        const parts = list(record(list(translated.body.contents)[0]).parts).map(record);
        expect(parts.some((part) => record(part.fileData).fileUri === "https://example.com/cat.png")).toBe(true);
      }
    });
  }
});

// ------------------------------------------------------------ tool definitions

function upstreamTools(upstream: ProtocolId, body: Json): Array<{ name: string; description?: string; parameters: unknown }> {
  switch (upstream) {
    case "openai-chat":
      return list(body.tools).map((tool) => {
        const fn = record(record(tool).function);
        expect(record(tool).type).toBe("function");
        return { name: String(fn.name), description: fn.description as string, parameters: fn.parameters };
      });
    case "openai-responses":
      return list(body.tools).map((value) => {
        const tool = record(value);
        expect(tool.type).toBe("function");
        return { name: String(tool.name), description: tool.description as string, parameters: tool.parameters };
      });
    case "anthropic-messages":
      return list(body.tools).map((value) => {
        const tool = record(value);
        return { name: String(tool.name), description: tool.description as string, parameters: tool.input_schema };
      });
    case "google-generate-content": {
      const groups = list(body.tools).map(record);
      expect(groups).toHaveLength(1);
      return list(groups[0]?.functionDeclarations).map((value) => {
        const declaration = record(value);
        return { name: String(declaration.name), description: declaration.description as string, parameters: declaration.parameters };
      });
    }
  }
}

function upstreamToolChoice(upstream: ProtocolId, body: Json): unknown {
  if (upstream === "google-generate-content") return body.toolConfig;
  return body.tool_choice;
}

/** How each wire spells each canonical tool_choice. */
const TOOL_CHOICE_TABLE: Record<ProtocolId, (choice: ToolChoiceSpec) => unknown> = {
  "openai-chat": (choice) => (typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } }),
  "openai-responses": (choice) => (typeof choice === "string" ? choice : { type: "function", name: choice.name }),
  "anthropic-messages": (choice) =>
    choice === "auto" ? { type: "auto" } : choice === "required" ? { type: "any" } : choice === "none" ? { type: "none" } : { type: "tool", name: choice.name },
  "google-generate-content": (choice) => ({
    functionCallingConfig:
      choice === "auto"
        ? { mode: "AUTO" }
        : choice === "required"
          ? { mode: "ANY" }
          : choice === "none"
            ? { mode: "NONE" }
            : { mode: "ANY", allowedFunctionNames: [choice.name] },
  }),
};

const CHOICES: ToolChoiceSpec[] = ["auto", "required", "none", { name: "get_time" }];

describe("tool definitions and tool_choice map to each wire on every pair", () => {
  for (const [client, upstream] of PAIRS) {
    test(`${client} → ${upstream}: function tools arrive with name, description and parameters`, () => {
      const translated = translate(client, upstream, { turns: [{ role: "user", parts: [{ text: "hi" }] }], tools: [WEATHER_TOOL, TIME_TOOL] });
      expect(upstreamTools(upstream, translated.body)).toEqual([
        { name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, parameters: WEATHER_TOOL.parameters },
        { name: TIME_TOOL.name, description: TIME_TOOL.description, parameters: TIME_TOOL.parameters },
      ]);
      expect(translated.warnings).toEqual([]);
    });

    for (const choice of CHOICES) {
      const label = typeof choice === "string" ? choice : `forced tool ${choice.name}`;
      test(`${client} → ${upstream}: tool_choice ${label} is rendered in ${upstream}'s form`, () => {
        const translated = translate(client, upstream, {
          turns: [{ role: "user", parts: [{ text: "What time is it in Tokyo?" }] }],
          tools: [WEATHER_TOOL, TIME_TOOL],
          toolChoice: choice,
        });
        expect(upstreamToolChoice(upstream, translated.body)).toEqual(TOOL_CHOICE_TABLE[upstream](choice));
        expect(translated.warnings).toEqual([]);
      });
    }

    if (client !== "google-generate-content") {
      test(`${client} → ${upstream}: parallel_tool_calls=false is carried (Anthropic: disable_parallel_tool_use) or reported`, () => {
        const translated = translate(client, upstream, {
          turns: [{ role: "user", parts: [{ text: "Weather in Paris and Tokyo?" }] }],
          tools: [WEATHER_TOOL],
          toolChoice: "auto",
          parallelToolCalls: false,
        });
        const body = translated.body;
        if (upstream === "openai-chat" || upstream === "openai-responses") expect(body.parallel_tool_calls).toBe(false);
        else if (upstream === "anthropic-messages") expect(body.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
        else expect(warned(translated.warnings, ["parallel_tool_calls"])).toBe(true);
      });
    }
  }
});

// ----------------------------------------------------------- structured output

const REPORT_SCHEMA: Json = {
  type: "object",
  properties: { city: { type: "string" }, temp_c: { type: "number" } },
  required: ["city", "temp_c"],
  additionalProperties: false,
};
/** Gemini's Schema is an OpenAPI subset without additionalProperties. */
const GEMINI_REPORT_SCHEMA: Json = { type: "object", properties: REPORT_SCHEMA.properties, required: REPORT_SCHEMA.required };

describe("structured output (json_schema) maps to each wire on every pair", () => {
  for (const [client, upstream] of PAIRS) {
    test(`${client} → ${upstream}: a json_schema response format arrives in ${upstream}'s field`, () => {
      const sourceSchema = client === "google-generate-content" ? GEMINI_REPORT_SCHEMA : REPORT_SCHEMA;
      const translated = translate(client, upstream, {
        turns: [{ role: "user", parts: [{ text: "Weather report for Paris as JSON." }] }],
        jsonSchema: { name: "weather_report", schema: sourceSchema, strict: true },
      });
      const body = translated.body;
      // Anthropic and Gemini formats are unnamed; OpenAI wires then use "response".
      const named = client === "openai-chat" || client === "openai-responses";
      const name = named ? "weather_report" : "response";
      if (upstream === "openai-chat") {
        expect(body.response_format).toEqual({
          type: "json_schema",
          json_schema: { name, schema: sourceSchema, ...(named ? { strict: true } : {}) },
        });
      } else if (upstream === "openai-responses") {
        expect(record(body.text).format).toEqual({ type: "json_schema", name, schema: sourceSchema, ...(named ? { strict: true } : {}) });
      } else if (upstream === "anthropic-messages") {
        expect(record(body.output_config).format).toEqual({ type: "json_schema", schema: sourceSchema });
      } else {
        const config = record(body.generationConfig);
        expect(config.responseMimeType).toBe("application/json");
        expect(config.responseSchema).toEqual(GEMINI_REPORT_SCHEMA);
      }
      expect(translated.warnings).toEqual([]);
    });
  }
});

/** A Gemini client's OpenAPI-subset schema, as the @google/genai SDK sends it. */
const GEMINI_CLIENT_SCHEMA: Json = {
  type: "OBJECT",
  properties: {
    temp_c: { type: "NUMBER", format: "double" },
    city: { type: "STRING", description: "City name", example: "Paris" },
    alerts: { type: "ARRAY", items: { type: "STRING", enum: ["rain", "wind"] }, maxItems: "3", nullable: true },
    source: { anyOf: [{ type: "STRING" }, { type: "INTEGER" }], nullable: true },
  },
  propertyOrdering: ["city", "temp_c", "alerts", "source"],
  required: ["city", "temp_c"],
};
/** The same schema in JSON Schema, properties in the client's propertyOrdering. */
const GEMINI_CLIENT_AS_JSON_SCHEMA: Json = {
  type: "object",
  properties: {
    city: { type: "string", description: "City name", examples: ["Paris"] },
    temp_c: { type: "number", format: "double" },
    alerts: { type: ["array", "null"], items: { type: "string", enum: ["rain", "wind"] }, maxItems: 3 },
    source: { anyOf: [{ type: "string" }, { type: "integer" }, { type: "null" }] },
  },
  required: ["city", "temp_c"],
};

/** OpenAPI-only keywords or upper-case types anywhere in a schema tree. */
function openApiLeftovers(schema: unknown, path = "$"): string[] {
  if (Array.isArray(schema)) return schema.flatMap((item, index) => openApiLeftovers(item, `${path}[${index}]`));
  if (typeof schema !== "object" || schema === null) return [];
  const node = schema as Json;
  const found = ["nullable", "propertyOrdering", "example"].filter((key) => key in node).map((key) => `${path}.${key}`);
  for (const type of [node.type].flat()) if (typeof type === "string" && type !== type.toLowerCase()) found.push(`${path}.type=${type}`);
  return [...found, ...Object.entries(node).flatMap(([key, value]) => openApiLeftovers(value, `${path}.${key}`))];
}

describe("a Gemini client's schemas reach every other upstream as JSON Schema", () => {
  const body: Json = {
    model: CLIENT_MODEL,
    contents: [{ role: "user", parts: [{ text: "Weather report for Paris as JSON." }] }],
    tools: [{ functionDeclarations: [{ name: "report", description: "File a report", parameters: GEMINI_CLIENT_SCHEMA }] }],
    generationConfig: { responseMimeType: "application/json", responseSchema: GEMINI_CLIENT_SCHEMA },
  };
  const outputSchema: Record<Exclude<ProtocolId, "google-generate-content">, (body: Json) => unknown> = {
    "openai-chat": (upstreamBody) => record(record(upstreamBody.response_format).json_schema).schema,
    "openai-responses": (upstreamBody) => record(record(upstreamBody.text).format).schema,
    "anthropic-messages": (upstreamBody) => record(record(upstreamBody.output_config).format).schema,
  };
  for (const [upstream, readSchema] of Object.entries(outputSchema) as Array<[ProtocolId, (body: Json) => unknown]>) {
    test(`google-generate-content → ${upstream}: the output schema and every tool's parameters are lower-case JSON Schema`, () => {
      const translated = translateBody("google-generate-content", upstream, body);
      const schemas = [readSchema(translated.body), ...upstreamTools(upstream, translated.body).map((tool) => tool.parameters)];
      expect(schemas).toHaveLength(2);
      for (const schema of schemas) {
        expect(schema).toEqual(GEMINI_CLIENT_AS_JSON_SCHEMA);
        expect(Object.keys(record(record(schema).properties))).toEqual(["city", "temp_c", "alerts", "source"]);
        expect(openApiLeftovers(schema)).toEqual([]);
      }
      expect(translated.warnings).toEqual([]);
    });
  }

  test("google-generate-content → google-generate-content: the schema keeps its meaning and its property order", () => {
    const translated = translateBody("google-generate-content", "google-generate-content", body);
    const expected = {
      type: "object",
      properties: {
        city: { type: "string", description: "City name", example: "Paris" },
        temp_c: { type: "number", format: "double" },
        alerts: { type: "array", nullable: true, items: { type: "string", enum: ["rain", "wind"] }, maxItems: 3 },
        source: { anyOf: [{ type: "string" }, { type: "integer" }], nullable: true },
      },
      propertyOrdering: ["city", "temp_c", "alerts", "source"],
      required: ["city", "temp_c"],
    };
    expect(record(translated.body.generationConfig).responseSchema).toEqual(expected);
    expect(upstreamTools("google-generate-content", translated.body).map((tool) => tool.parameters)).toEqual([expected]);
    expect(translated.warnings).toEqual([]);
  });
});

// ------------------------------------------------------------ generation params

const ALL_PARAMS: Required<ParamsSpec> = {
  maxTokens: 321,
  temperature: 0.3,
  topP: 0.9,
  topK: 40,
  stop: ["END"],
  seed: 7,
  presencePenalty: 0.5,
  frequencyPenalty: 0.25,
  effort: "high",
};

type ParamReader = (body: Json) => unknown;

/** Where each upstream puts each param; absent = unsupported there. */
const UPSTREAM_PARAMS: Record<ProtocolId, Partial<Record<keyof ParamsSpec, ParamReader>>> = {
  "openai-chat": {
    maxTokens: (body) => body.max_completion_tokens ?? body.max_tokens,
    temperature: (body) => body.temperature,
    topP: (body) => body.top_p,
    stop: (body) => body.stop,
    seed: (body) => body.seed,
    presencePenalty: (body) => body.presence_penalty,
    frequencyPenalty: (body) => body.frequency_penalty,
    effort: (body) => body.reasoning_effort,
  },
  "openai-responses": {
    maxTokens: (body) => body.max_output_tokens,
    temperature: (body) => body.temperature,
    topP: (body) => body.top_p,
    effort: (body) => record(body.reasoning).effort,
  },
  "anthropic-messages": {
    maxTokens: (body) => body.max_tokens,
    temperature: (body) => body.temperature,
    topP: (body) => body.top_p,
    topK: (body) => body.top_k,
    stop: (body) => body.stop_sequences,
    effort: (body) => record(body.output_config).effort,
  },
  "google-generate-content": {
    maxTokens: (body) => record(body.generationConfig).maxOutputTokens,
    temperature: (body) => record(body.generationConfig).temperature,
    topP: (body) => record(body.generationConfig).topP,
    topK: (body) => record(body.generationConfig).topK,
    stop: (body) => record(body.generationConfig).stopSequences,
    seed: (body) => record(body.generationConfig).seed,
    presencePenalty: (body) => record(body.generationConfig).presencePenalty,
    frequencyPenalty: (body) => record(body.generationConfig).frequencyPenalty,
    effort: (body) => record(record(body.generationConfig).thinkingConfig).thinkingLevel,
  },
};

const PARAM_WARNING_NAMES: Record<keyof ParamsSpec, string[]> = {
  maxTokens: ["max_tokens", "maxOutputTokens", "max_output_tokens"],
  temperature: ["temperature"],
  topP: ["top_p", "topP"],
  topK: ["top_k", "topK"],
  stop: ["stop"],
  seed: ["seed"],
  presencePenalty: ["presence_penalty", "presencePenalty"],
  frequencyPenalty: ["frequency_penalty", "frequencyPenalty"],
  effort: ["reasoning_effort", "effort", "thinkingLevel"],
};

function paramsFor(client: ProtocolId): ParamsSpec {
  const params: ParamsSpec = {};
  for (const key of CLIENT_PARAMS[client]) (params as Record<string, unknown>)[key] = ALL_PARAMS[key];
  return params;
}

describe("generation params are carried or reported as warnings on every pair", () => {
  for (const [client, upstream] of PAIRS) {
    for (const key of CLIENT_PARAMS[client]) {
      const reader = UPSTREAM_PARAMS[upstream][key];
      const verdict = reader === undefined ? "is reported as unsupported" : "is carried";
      test(`${client} → ${upstream}: ${key} ${verdict}`, () => {
        const translated = translate(client, upstream, { turns: [{ role: "user", parts: [{ text: "hi" }] }], params: paramsFor(client) });
        if (reader === undefined) {
          expect(warned(translated.encodeWarnings, PARAM_WARNING_NAMES[key])).toBe(true);
          expect(JSON.stringify(translated.body)).not.toContain(String(JSON.stringify(ALL_PARAMS[key])));
        } else {
          expect(reader(translated.body)).toEqual(ALL_PARAMS[key]);
          expect(warned(translated.encodeWarnings, PARAM_WARNING_NAMES[key])).toBe(false);
        }
      });
    }

    test(`${client} → ${upstream}: without a token limit ${upstream === "anthropic-messages" ? "Anthropic gets the required default 4096" : "no limit is invented"}`, () => {
      const { body } = translate(client, upstream, { turns: [{ role: "user", parts: [{ text: "hi" }] }] });
      if (upstream === "anthropic-messages") expect(body.max_tokens).toBe(4096);
      else expect(UPSTREAM_PARAMS[upstream].maxTokens?.(body)).toBeUndefined();
    });

    test(`${client} → ${upstream}: Gemini's thinking effort also asks for thought summaries`, () => {
      const { body } = translate(client, upstream, { turns: [{ role: "user", parts: [{ text: "hi" }] }], params: { effort: "medium" } });
      if (upstream === "google-generate-content") {
        expect(record(body.generationConfig).thinkingConfig).toEqual({ thinkingLevel: "medium", includeThoughts: true });
      } else {
        expect(UPSTREAM_PARAMS[upstream].effort?.(body)).toBe("medium");
      }
    });
  }
});

// ------------------------------------------------------------------- reasoning

const REASONING_TEXT = "Two independent lookups are needed.";

/** A client turn whose assistant history carries reasoning in the client's own form. */
function reasoningBody(client: ProtocolId): { body: Json; reasoningParts: number } {
  const user = "Weather in Paris?";
  switch (client) {
    case "openai-chat":
      return {
        reasoningParts: 1,
        body: {
          model: CLIENT_MODEL,
          messages: [
            { role: "user", content: user },
            {
              role: "assistant",
              reasoning_content: REASONING_TEXT,
              content: "Checking.",
              tool_calls: [{ id: "call_r1", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } }],
            },
            { role: "tool", tool_call_id: "call_r1", content: "18°C" },
          ],
        },
      };
    case "openai-responses":
      return {
        reasoningParts: 1,
        body: {
          model: CLIENT_MODEL,
          input: [
            { role: "user", content: user },
            { type: "reasoning", id: "rs_abc123", summary: [{ type: "summary_text", text: REASONING_TEXT }], encrypted_content: "gAAAA-encrypted" },
            { type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking." }] },
            { type: "function_call", call_id: "call_r1", name: "get_weather", arguments: '{"location":"Paris"}' },
            { type: "function_call_output", call_id: "call_r1", output: "18°C" },
          ],
        },
      };
    case "anthropic-messages":
      return {
        reasoningParts: 2,
        body: {
          model: CLIENT_MODEL,
          max_tokens: 9000,
          thinking: { type: "enabled", budget_tokens: 2048 },
          messages: [
            { role: "user", content: user },
            {
              role: "assistant",
              content: [
                { type: "thinking", thinking: REASONING_TEXT, signature: "EqQBCkYIBxgCKkBd-anthropic-sig" },
                { type: "redacted_thinking", data: "EmwKAhgBEgy3-redacted" },
                { type: "text", text: "Checking." },
                { type: "tool_use", id: "call_r1", name: "get_weather", input: { location: "Paris" } },
              ],
            },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "call_r1", content: "18°C" }] },
          ],
        },
      };
    case "google-generate-content":
      return {
        reasoningParts: 1,
        body: {
          contents: [
            { role: "user", parts: [{ text: user }] },
            {
              role: "model",
              parts: [
                { text: REASONING_TEXT, thought: true, thoughtSignature: "CiQB0e2K-gemini-sig" },
                { text: "Checking." },
                { functionCall: { name: "get_weather", args: { location: "Paris" } }, thoughtSignature: "CiQB0e2K-call-sig" },
              ],
            },
            { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { result: "18°C" } } }] },
          ],
        },
      };
  }
}

describe("reasoning in the history survives only where it can be replayed, otherwise it is reported", () => {
  for (const [client, upstream] of PAIRS) {
    const replayable = client === upstream && client !== "openai-chat";
    test(`${client} → ${upstream}: reasoning is ${replayable ? "replayed natively with its signature" : "dropped with a warning"} and the rest of the turn survives`, () => {
      const { body: clientWire, reasoningParts } = reasoningBody(client);
      const translated = translateBody(client, upstream, clientWire);
      const body = translated.body;
      const wire = JSON.stringify(body);
      const dropped = translated.encodeWarnings.filter((warning) => warning.code === "dropped_content");

      // The visible part of the assistant turn always arrives.
      const seen = readUpstreamBody(upstream, body);
      expect(seen.items.filter((item) => item.kind === "assistant_text" || item.kind === "call").map((item) => item.kind)).toEqual([
        "assistant_text",
        "call",
      ]);

      if (!replayable) {
        expect(wire).not.toContain(REASONING_TEXT);
        expect(dropped).toHaveLength(reasoningParts);
        for (const warning of dropped) expect(warning.field).toMatch(/^messages\[\d+\]\.content\[\d+\]$/);
        return;
      }
      expect(dropped).toEqual([]);
      if (upstream === "anthropic-messages") {
        const assistant = record(list(body.messages)[1]);
        expect(list(assistant.content).slice(0, 2)).toEqual([
          { type: "thinking", thinking: REASONING_TEXT, signature: "EqQBCkYIBxgCKkBd-anthropic-sig" },
          { type: "redacted_thinking", data: "EmwKAhgBEgy3-redacted" },
        ]);
        expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
      } else if (upstream === "openai-responses") {
        expect(list(body.input)).toContainEqual({
          type: "reasoning",
          id: "rs_abc123",
          summary: [{ type: "summary_text", text: REASONING_TEXT }],
          encrypted_content: "gAAAA-encrypted",
        });
      } else {
        const model = list(body.contents).map(record).find((content) => content.role === "model");
        const parts = list(model?.parts).map(record);
        expect(parts).toContainEqual({ text: REASONING_TEXT, thought: true, thoughtSignature: "CiQB0e2K-gemini-sig" });
        expect(parts.find((part) => part.functionCall !== undefined)?.thoughtSignature).toBe("CiQB0e2K-call-sig");
      }
    });
  }

  for (const upstream of PROTOCOL_IDS) {
    test(`anthropic-messages → ${upstream}: a thinking budget is carried (Gemini thinkingBudget, Anthropic thinking) or reported`, () => {
      const translated = translateBody("anthropic-messages", upstream, {
        model: CLIENT_MODEL,
        thinking: { type: "enabled", budget_tokens: 2048 },
        messages: [{ role: "user", content: "hi" }],
      });
      const body = translated.body;
      if (upstream === "anthropic-messages") {
        expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
        // max_tokens is required and must exceed the budget.
        expect(Number(body.max_tokens)).toBeGreaterThan(2048);
      } else if (upstream === "google-generate-content") {
        expect(record(record(body.generationConfig).thinkingConfig).thinkingBudget).toBe(2048);
      } else {
        expect(warned(translated.encodeWarnings, ["budget_tokens"])).toBe(true);
      }
    });
  }
});

// ------------------------------------------------- Anthropic wire requirements

/** Empty and whitespace-only text in user, assistant and tool-result positions, then results + user text. */
function emptyTextBody(client: ProtocolId): Json {
  switch (client) {
    case "openai-chat":
      return {
        model: CLIENT_MODEL,
        messages: [
          { role: "user", content: [{ type: "text", text: "" }, { type: "text", text: "   " }, { type: "text", text: "Real question?" }] },
          {
            role: "assistant",
            content: "",
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } },
              { id: "call_b", type: "function", function: { name: "get_time", arguments: '{"timezone":"Europe/Paris"}' } },
            ],
          },
          { role: "tool", tool_call_id: "call_a", content: "" },
          { role: "tool", tool_call_id: "call_b", content: "14:05" },
          { role: "user", content: "Thanks, and tomorrow?" },
        ],
      };
    case "openai-responses":
      return {
        model: CLIENT_MODEL,
        input: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "" }, { type: "input_text", text: "   " }, { type: "input_text", text: "Real question?" }] },
          { type: "message", role: "assistant", content: [{ type: "output_text", text: "" }] },
          { type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"location":"Paris"}' },
          { type: "function_call", call_id: "call_b", name: "get_time", arguments: '{"timezone":"Europe/Paris"}' },
          { type: "function_call_output", call_id: "call_a", output: "" },
          { type: "function_call_output", call_id: "call_b", output: "14:05" },
          { type: "message", role: "user", content: "Thanks, and tomorrow?" },
        ],
      };
    case "anthropic-messages":
      return {
        model: CLIENT_MODEL,
        max_tokens: 100,
        messages: [
          { role: "user", content: [{ type: "text", text: "" }, { type: "text", text: "   " }, { type: "text", text: "Real question?" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "" },
              { type: "tool_use", id: "call_a", name: "get_weather", input: { location: "Paris" } },
              { type: "tool_use", id: "call_b", name: "get_time", input: { timezone: "Europe/Paris" } },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "call_a", content: [{ type: "text", text: "" }] },
              { type: "tool_result", tool_use_id: "call_b", content: "14:05" },
              { type: "text", text: "Thanks, and tomorrow?" },
            ],
          },
        ],
      };
    case "google-generate-content":
      return {
        contents: [
          { role: "user", parts: [{ text: "" }, { text: "   " }, { text: "Real question?" }] },
          {
            role: "model",
            parts: [
              { text: "" },
              { functionCall: { name: "get_weather", args: { location: "Paris" } } },
              { functionCall: { name: "get_time", args: { timezone: "Europe/Paris" } } },
            ],
          },
          {
            role: "user",
            parts: [
              { functionResponse: { name: "get_weather", response: { result: "" } } },
              { functionResponse: { name: "get_time", response: { result: "14:05" } } },
            ],
          },
          { parts: [{ text: "Thanks, and tomorrow?" }] },
        ],
      };
  }
}

function allTextBlocks(blocks: unknown[]): string[] {
  const texts: string[] = [];
  for (const block of blocks.map(record)) {
    if (block.type === "text") texts.push(String(block.text));
    if (block.type === "tool_result" && Array.isArray(block.content)) texts.push(...allTextBlocks(block.content));
  }
  return texts;
}

describe("Anthropic upstreams never receive empty text blocks, and tool results share one user turn", () => {
  for (const client of PROTOCOL_IDS) {
    test(`${client} → anthropic-messages: no empty or whitespace-only text block reaches the wire`, () => {
      const { body } = translateBody(client, "anthropic-messages", emptyTextBody(client));
      const messages = list(body.messages).map(record);
      for (const message of messages) {
        expect(list(message.content).length).toBeGreaterThan(0);
        for (const text of allTextBlocks(list(message.content))) expect(text.trim()).not.toBe("");
      }
      expect(allTextBlocks(list(record(messages[0]).content))).toEqual(["Real question?"]);
    });

    test(`${client} → anthropic-messages: consecutive tool results merge into one user message before the user's text`, () => {
      const { body } = translateBody(client, "anthropic-messages", emptyTextBody(client));
      const messages = list(body.messages).map(record);
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
      const toolUseIds = list(messages[1]?.content)
        .map(record)
        .filter((block) => block.type === "tool_use")
        .map((block) => block.id);
      expect(toolUseIds).toHaveLength(2);
      const last = list(messages[2]?.content).map(record);
      expect(last.map((block) => block.type)).toEqual(["tool_result", "tool_result", "text"]);
      expect(last.slice(0, 2).map((block) => block.tool_use_id)).toEqual(toolUseIds);
      expect(last[1]?.content).toBe("14:05");
      expect(last[2]?.text).toBe("Thanks, and tomorrow?");
    });
  }
});

// ---------------------------------------------------------- protocol extras

/** One field per protocol that the IR does not model: it may only reach the same protocol. */
const EXTRA_FIELD: Record<ProtocolId, { key: string; value: unknown }> = {
  "openai-chat": { key: "logit_bias", value: { "50256": -100 } },
  "openai-responses": { key: "metadata", value: { trace: "t-1" } },
  "anthropic-messages": { key: "metadata", value: { user_id: "user_7d3f" } },
  "google-generate-content": { key: "safetySettings", value: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }] },
};

describe("provider-specific extras reach only the same protocol; elsewhere they are reported", () => {
  for (const [client, upstream] of PAIRS) {
    const { key, value } = EXTRA_FIELD[client];
    test(`${client} → ${upstream}: ${key} is ${client === upstream ? "passed through" : "dropped with a warning"}`, () => {
      const body = { ...clientBody(client, { turns: [{ role: "user", parts: [{ text: "hi" }] }] }), [key]: value };
      const translated = translateBody(client, upstream, body);
      if (client === upstream) {
        expect(translated.body[key]).toEqual(value);
        expect(translated.encodeWarnings).toEqual([]);
      } else {
        expect(JSON.stringify(translated.body)).not.toContain(JSON.stringify(value));
        expect(translated.encodeWarnings.some((warning) => warning.field === key)).toBe(true);
      }
    });
  }
});

// ------------------------------------------------------------- stream flag

describe("the stream flag reaches each upstream in its own form", () => {
  for (const [client, upstream] of PAIRS) {
    test(`${client} → ${upstream}: a streamed request ${upstream === "google-generate-content" ? "keeps stream out of the body (it is in the URL)" : "sets stream"}`, () => {
      const { body } = translate(client, upstream, { turns: [{ role: "user", parts: [{ text: "hi" }] }] }, true);
      if (upstream === "google-generate-content") {
        expect(body.stream).toBeUndefined();
        expect(body.model).toBeUndefined();
      } else {
        expect(body.stream).toBe(true);
        expect(body.model).toBe(UPSTREAM_MODEL);
      }
      // Chat upstreams only report stream usage when asked (`stream_options.include_usage`).
      if (upstream === "openai-chat") expect(body.stream_options).toEqual({ include_usage: true });
    });
  }
});

// ------------------------------------------------------------------- store

describe("store is carried between the OpenAI wires, refused (400) towards Anthropic and Gemini", () => {
  const openAiClients: ProtocolId[] = ["openai-chat", "openai-responses"];
  for (const client of openAiClients) {
    for (const upstream of PROTOCOL_IDS) {
      const body = { ...clientBody(client, { turns: [{ role: "user", parts: [{ text: "hi" }] }] }), store: true };
      if (upstream === "openai-chat" || upstream === "openai-responses") {
        test(`${client} → ${upstream}: store: true reaches the upstream as store: true`, () => {
          const translated = translateBody(client, upstream, body);
          expect(translated.body.store).toBe(true);
        });
      } else {
        test(`${client} → ${upstream}: store: true is refused as an invalid request instead of being dropped`, () => {
          expect(() => translateBody(client, upstream, body)).toThrow(IrDecodeError);
        });
      }
    }
  }
});
