import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateText, streamText, stepCountIs, tool, type LanguageModel } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { z } from "zod";
import { DEFAULT_TEXT, DEFAULT_TOOL_NAME } from "../support/mock-upstreams";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";

/**
 * The Vercel AI SDK, pointed at Switchyard by base URL alone, passes four checks:
 * text, stream, text-tools and stream-tools — for OpenAI chat, OpenAI Responses,
 * Anthropic and Google providers, each against an upstream of another protocol, so
 * translation is exercised too.
 */
let harness: InferenceHarness;
let providers: Record<string, (model: string) => LanguageModel>;

const UPSTREAM = {
  "openai.chat": "mock-anthropic/claude-sonnet-4-5",
  "openai.responses": "mock-google/gemini-2.5-flash",
  anthropic: "mock-openai/gpt-4o-mini",
  google: "mock-responses/gpt-5-mini",
} as const;

const weather = tool({
  description: "Get the weather for a location",
  inputSchema: z.object({ location: z.string() }),
  execute: async ({ location }) => ({ location, temperature: 21 }),
});

beforeAll(async () => {
  harness = await startInferenceHarness();
  const apiKey = harness.account.apiKey;
  const base = harness.server.url;
  const openai = createOpenAI({ apiKey, baseURL: `${base}/v1` });
  const anthropic = createAnthropic({ apiKey, baseURL: `${base}/v1` });
  const google = createGoogleGenerativeAI({ apiKey, baseURL: `${base}/v1beta` });
  providers = {
    "openai.chat": (model) => openai.chat(model),
    "openai.responses": (model) => openai.responses(model),
    anthropic: (model) => anthropic(model),
    google: (model) => google(model),
  };
});
afterAll(() => harness.close());

for (const [name, model] of Object.entries(UPSTREAM)) {
  describe(`Vercel AI SDK, ${name} provider (upstream ${model.split("/")[0]})`, () => {
    test("text: generateText returns the answer", async () => {
      const result = await generateText({ model: providers[name]!(model), prompt: "Reply with exactly: Hello, world!", maxOutputTokens: 32 });
      expect(result.text).toBe(DEFAULT_TEXT);
      expect(result.usage.inputTokens).toBeGreaterThan(0);
    });

    test("stream: streamText delivers the answer in pieces", async () => {
      const result = streamText({ model: providers[name]!(model), prompt: "Reply with exactly: Hello, world!", maxOutputTokens: 32 });
      let text = "";
      for await (const piece of result.textStream) text += piece;
      expect(text).toBe(DEFAULT_TEXT);
    });

    test("text-tools: generateText calls the tool", async () => {
      const result = await generateText({
        model: providers[name]!(`${model}@tool_call`),
        prompt: "What is the weather in Paris?",
        tools: { [DEFAULT_TOOL_NAME]: weather },
        stopWhen: stepCountIs(3),
      });
      const calls = result.steps.flatMap((step) => step.toolCalls);
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls[0]!.toolName).toBe(DEFAULT_TOOL_NAME);
      expect(calls[0]!.input).toEqual({ location: "Paris" });
    });

    test("stream-tools: streamText calls the tool", async () => {
      const result = streamText({
        model: providers[name]!(`${model}@tool_call`),
        prompt: "What is the weather in Paris?",
        tools: { [DEFAULT_TOOL_NAME]: weather },
        stopWhen: stepCountIs(3),
      });
      const calls: Array<{ toolName: string; input: unknown }> = [];
      for await (const part of result.fullStream) {
        if (part.type === "tool-call") calls.push({ toolName: part.toolName, input: part.input });
        if (part.type === "error") throw part.error;
      }
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls[0]).toEqual({ toolName: DEFAULT_TOOL_NAME, input: { location: "Paris" } });
    });
  });
}
