import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI, Type } from "@google/genai";
import { DEFAULT_TEXT, DEFAULT_TOOL_ARGS, DEFAULT_TOOL_NAME } from "../support/mock-upstreams";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";

/**
 * The official SDKs, unchanged but for their base URL, drive Switchyard for every
 * client protocol × upstream protocol pair, sync and stream, text and tool calls.
 */
const UPSTREAM_MODELS = {
  "openai-chat": "mock-openai/gpt-4o-mini",
  "openai-responses": "mock-responses/gpt-5-mini",
  "anthropic-messages": "mock-anthropic/claude-sonnet-4-5",
  "google-generate-content": "mock-google/gemini-2.5-flash",
} as const;

const WEATHER_SCHEMA = { type: "object", properties: { location: { type: "string" } }, required: ["location"] };

interface Outcome {
  text: string;
  toolName?: string;
  toolArgs?: unknown;
}

type Client = (model: string, stream: boolean, tools: boolean) => Promise<Outcome>;

let harness: InferenceHarness;
let clients: Record<string, Client>;

beforeAll(async () => {
  harness = await startInferenceHarness();
  const apiKey = harness.account.apiKey;
  const openai = new OpenAI({ apiKey, baseURL: `${harness.server.url}/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey, baseURL: harness.server.url, maxRetries: 0 });
  const google = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: harness.server.url } });

  clients = {
    "openai-chat": async (model, stream, tools) => {
      const request = {
        model,
        messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
        ...(tools ? { tools: [{ type: "function" as const, function: { name: DEFAULT_TOOL_NAME, parameters: WEATHER_SCHEMA } }] } : {}),
      };
      if (!stream) {
        const completion = await openai.chat.completions.create(request);
        const call = completion.choices[0]!.message.tool_calls?.[0];
        return {
          text: completion.choices[0]!.message.content ?? "",
          ...(call && call.type === "function" ? { toolName: call.function.name, toolArgs: JSON.parse(call.function.arguments) } : {}),
        };
      }
      let text = "";
      let toolName: string | undefined;
      let args = "";
      for await (const chunk of await openai.chat.completions.create({ ...request, stream: true })) {
        const delta = chunk.choices[0]?.delta;
        text += delta?.content ?? "";
        for (const call of delta?.tool_calls ?? []) {
          if (call.index === 0) {
            toolName ??= call.function?.name;
            args += call.function?.arguments ?? "";
          }
        }
      }
      return { text, ...(toolName ? { toolName, toolArgs: JSON.parse(args) } : {}) };
    },
    "openai-responses": async (model, stream, tools) => {
      const request = {
        model,
        input: "What is the weather in Paris?",
        ...(tools ? { tools: [{ type: "function" as const, name: DEFAULT_TOOL_NAME, parameters: WEATHER_SCHEMA, strict: false }] } : {}),
      };
      const fromResponse = (response: OpenAI.Responses.Response): Outcome => {
        const call = response.output.find((item) => item.type === "function_call");
        // output_text is an SDK convenience only on non-streamed results; read the items.
        const text = response.output
          .flatMap((item) => (item.type === "message" ? item.content : []))
          .map((part) => (part.type === "output_text" ? part.text : ""))
          .join("");
        return {
          text,
          ...(call && call.type === "function_call" ? { toolName: call.name, toolArgs: JSON.parse(call.arguments) } : {}),
        };
      };
      if (!stream) return fromResponse(await openai.responses.create(request));
      let completed: OpenAI.Responses.Response | undefined;
      let deltas = "";
      for await (const event of await openai.responses.create({ ...request, stream: true })) {
        if (event.type === "response.output_text.delta") deltas += event.delta;
        if (event.type === "response.completed") completed = event.response;
      }
      expect(completed).toBeDefined();
      const outcome = fromResponse(completed!);
      expect(deltas).toBe(outcome.text);
      return outcome;
    },
    "anthropic-messages": async (model, stream, tools) => {
      const request = {
        model,
        max_tokens: 256,
        messages: [{ role: "user" as const, content: "What is the weather in Paris?" }],
        ...(tools ? { tools: [{ name: DEFAULT_TOOL_NAME, input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema }] } : {}),
      };
      const message = stream ? await anthropic.messages.stream(request).finalMessage() : await anthropic.messages.create(request);
      const text = message.content.filter((b) => b.type === "text").map((b) => (b as Anthropic.TextBlock).text).join("");
      const call = message.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock | undefined;
      if (call) expect(message.stop_reason).toBe("tool_use");
      return { text, ...(call ? { toolName: call.name, toolArgs: call.input } : {}) };
    },
    "google-generate-content": async (model, stream, tools) => {
      const request = {
        model,
        contents: "What is the weather in Paris?",
        ...(tools ? { config: { tools: [{ functionDeclarations: [{ name: DEFAULT_TOOL_NAME, parametersJsonSchema: WEATHER_SCHEMA }] }] } } : {}),
      };
      if (!stream) {
        const response = await google.models.generateContent(request);
        const call = response.functionCalls?.[0];
        return { text: response.text ?? "", ...(call ? { toolName: call.name, toolArgs: call.args } : {}) };
      }
      let text = "";
      let toolName: string | undefined;
      let toolArgs: unknown;
      for await (const chunk of await google.models.generateContentStream(request)) {
        text += chunk.text ?? "";
        const call = chunk.functionCalls?.[0];
        if (call) {
          toolName = call.name;
          toolArgs = call.args;
        }
      }
      return { text, ...(toolName ? { toolName, toolArgs } : {}) };
    },
  };
});
afterAll(() => harness.close());

for (const client of Object.keys(UPSTREAM_MODELS)) {
  describe(`${client} client`, () => {
    for (const [upstream, model] of Object.entries(UPSTREAM_MODELS)) {
      for (const stream of [false, true]) {
        const mode = stream ? "stream" : "sync";
        test(`gets text from a ${upstream} upstream (${mode})`, async () => {
          const outcome = await clients[client]!(model, stream, false);
          expect(outcome.text).toBe(DEFAULT_TEXT);
          expect(outcome.toolName).toBeUndefined();
        });
        test(`gets a tool call from a ${upstream} upstream (${mode})`, async () => {
          const outcome = await clients[client]!(`${model}@tool_call`, stream, true);
          expect(outcome.toolName).toBe(DEFAULT_TOOL_NAME);
          expect(outcome.toolArgs).toEqual(DEFAULT_TOOL_ARGS);
        });
      }
    }
  });
}

describe("a @google/genai client's schemas reach every upstream in that upstream's schema language", () => {
  /** Built with the SDK's own `Type` enum, as its documentation shows. */
  const reportSchema = {
    type: Type.OBJECT,
    properties: {
      temp_c: { type: Type.NUMBER },
      city: { type: Type.STRING, description: "City name" },
      alerts: { type: Type.ARRAY, items: { type: Type.STRING, enum: ["rain", "wind"] }, nullable: true },
    },
    propertyOrdering: ["city", "temp_c", "alerts"],
    required: ["city", "temp_c"],
  };
  const jsonSchema = {
    type: "object",
    properties: {
      city: { type: "string", description: "City name" },
      temp_c: { type: "number" },
      alerts: { type: ["array", "null"], items: { type: "string", enum: ["rain", "wind"] } },
    },
    required: ["city", "temp_c"],
  };
  type Json = Record<string, unknown>;
  /** Follows `keys` through nested objects and arrays (numeric keys index arrays). */
  const at = (value: unknown, ...keys: Array<string | number>): unknown =>
    keys.reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? (node as Json)[key] : undefined), value);
  const each = (value: unknown, ...keys: string[]): unknown[] => (Array.isArray(value) ? value.map((item) => at(item, ...keys)) : []);
  const received: Record<string, (body: unknown) => unknown[]> = {
    "openai-chat": (body) => [at(body, "response_format", "json_schema", "schema"), ...each(at(body, "tools"), "function", "parameters")],
    "openai-responses": (body) => [at(body, "text", "format", "schema"), ...each(at(body, "tools"), "parameters")],
    "anthropic-messages": (body) => [at(body, "output_config", "format", "schema"), ...each(at(body, "tools"), "input_schema")],
    "google-generate-content": (body) => [at(body, "generationConfig", "responseSchema"), ...each(at(body, "tools", 0, "functionDeclarations"), "parameters")],
  };
  const mockFor = { "openai-chat": "openai", "openai-responses": "responses", "anthropic-messages": "anthropic", "google-generate-content": "google" } as const;

  for (const [upstream, model] of Object.entries(UPSTREAM_MODELS) as Array<[keyof typeof UPSTREAM_MODELS, string]>) {
    for (const stream of [false, true]) {
      test(`${upstream} upstream (${stream ? "stream" : "sync"}): response schema and tool parameters`, async () => {
        const google = new GoogleGenAI({ apiKey: harness.account.apiKey, httpOptions: { baseUrl: harness.server.url } });
        const request = {
          model,
          contents: "Weather report for Paris as JSON.",
          config: {
            responseMimeType: "application/json",
            responseSchema: reportSchema,
            tools: [{ functionDeclarations: [{ name: "file_report", description: "File a report", parameters: reportSchema }] }],
          },
        };
        let text = "";
        if (stream) for await (const chunk of await google.models.generateContentStream(request)) text += chunk.text ?? "";
        else text = (await google.models.generateContent(request)).text ?? "";
        expect(text).toBe(DEFAULT_TEXT);
        const schemas = received[upstream]!(harness.mocks[mockFor[upstream]].requests.at(-1)?.body);
        expect(schemas).toHaveLength(2);
        for (const schema of schemas) {
          if (upstream === "google-generate-content") {
            // Back to Gemini's Schema: the same meaning, nullable and the declared order kept.
            expect(schema).toEqual({
              type: "object",
              properties: {
                city: { type: "string", description: "City name" },
                temp_c: { type: "number" },
                alerts: { type: "array", nullable: true, items: { type: "string", enum: ["rain", "wind"] } },
              },
              propertyOrdering: ["city", "temp_c", "alerts"],
              required: ["city", "temp_c"],
            });
          } else {
            expect(schema).toEqual(jsonSchema);
            expect(Object.keys((schema as { properties: object }).properties)).toEqual(["city", "temp_c", "alerts"]);
            expect(JSON.stringify(schema)).not.toMatch(/"(OBJECT|STRING|NUMBER|ARRAY)"|nullable|propertyOrdering/);
          }
        }
      });
    }
  }
});
