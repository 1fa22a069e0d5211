/**
 * The translated client streams, fed to the official SDKs' own stream accumulators
 * (OpenAI ChatCompletionStream and ResponseStream, Anthropic MessageStream) through a
 * fetch stub: no server, no network. The SDKs throw on malformed sequences (a delta for
 * a block that was never opened, a tool call without a name, a missing terminal event),
 * so this checks our client wire against real parsers, for every upstream fixture.
 */
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import type { ProtocolId } from "../../src/ir";
import { expectedWireUsage, readFixture, type CanonicalUsage, type ExpectedCall } from "./support/expectations";
import { runStream } from "./support/stream-harness";

interface SdkCase {
  upstream: ProtocolId;
  file: string;
  folder?: string;
  text: string;
  calls: ExpectedCall[];
  usage?: CanonicalUsage;
  /** The finish reason as each SDK reports it. */
  finish?: { chat: string; anthropic: string; responses: string };
  failure?: string;
}

const CASES: SdkCase[] = [
  {
    upstream: "openai-chat",
    file: "stream-compat-reasoning-tools.sse",
    text: "Let me check that for you.",
    calls: [{ id: "call_0_5c2d7e1a-9f3b-4c8d-a6e2-1b4f7c9d3e5a", name: "get_weather", args: '{"city": "Oslo", "unit": "celsius"}' }],
    usage: { prompt: 310, completion: 187, reasoning: 142, cacheRead: 256 },
    finish: { chat: "tool_calls", anthropic: "tool_use", responses: "completed" },
  },
  {
    upstream: "openai-chat",
    folder: "translation",
    file: "chat-interleaved-tool-calls.sse",
    text: "Checking both.",
    calls: [
      { id: "call_il_weather", name: "get_weather", args: '{"location": "Paris"}' },
      { id: "call_il_time", name: "get_time", args: '{"timezone": "Europe/Paris"}' },
    ],
    usage: { prompt: 240, completion: 38, cacheRead: 128 },
    finish: { chat: "tool_calls", anthropic: "tool_use", responses: "completed" },
  },
  {
    upstream: "openai-responses",
    file: "stream-reasoning-text.sse",
    text: "There are **three** r's in “strawberry”.",
    calls: [],
    usage: { prompt: 1320, completion: 412, reasoning: 384, cacheRead: 1152 },
    finish: { chat: "stop", anthropic: "end_turn", responses: "completed" },
  },
  {
    upstream: "openai-responses",
    file: "stream-function-calls.sse",
    text: "",
    calls: [
      { id: "call_Qm3xT8rV1nB6kZ2wL9pYc4Hd", name: "get_weather", args: '{"location":"Paris, France"}' },
      { id: "call_Wd5uJ2fG7hK0lP3sN6qRe9Tb", name: "get_weather", args: '{"location":"Tokyo, Japan"}' },
    ],
    usage: { prompt: 291, completion: 46, reasoning: 0, cacheRead: 0 },
    finish: { chat: "tool_calls", anthropic: "tool_use", responses: "completed" },
  },
  {
    upstream: "anthropic-messages",
    file: "stream-thinking-text-tools.sse",
    text: "I'll check the weather and the time in Paris — é ✓.",
    calls: [
      { id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", args: '{"location": "Paris, France", "unit": "celsius"}' },
      { id: "toolu_01VbJ2p8sQnLk4TmZyX7cR3d", name: "get_time", args: '{"timezone": "Europe/Paris"}' },
    ],
    usage: { prompt: 3544, completion: 156, cacheRead: 2048, cacheWrite: 1024 },
    finish: { chat: "tool_calls", anthropic: "tool_use", responses: "completed" },
  },
  {
    upstream: "anthropic-messages",
    file: "stream-redacted-max-tokens.sse",
    text: "Once upon a time, in a land far away",
    calls: [],
    usage: { prompt: 25, completion: 16, cacheRead: 0, cacheWrite: 0 },
    finish: { chat: "length", anthropic: "max_tokens", responses: "incomplete" },
  },
  {
    upstream: "google-generate-content",
    file: "stream-thinking-parallel-calls.sse",
    text: "Let me look that up — un instant.",
    calls: [
      { id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_0", name: "get_weather", args: '{"location":"Paris, France","unit":"celsius"}' },
      { id: "call_mZ5TaKnPLYqsz7IPpqvT8QE_1", name: "get_time", args: '{"timezone":"Europe/Paris"}' },
    ],
    usage: { prompt: 1843, completion: 170, reasoning: 112, cacheRead: 1024 },
    finish: { chat: "tool_calls", anthropic: "tool_use", responses: "completed" },
  },
  {
    upstream: "google-generate-content",
    file: "stream-safety.sse",
    text: "Here is how to",
    calls: [],
    usage: { prompt: 14, completion: 4 },
    finish: { chat: "content_filter", anthropic: "refusal", responses: "incomplete" },
  },
  { upstream: "openai-chat", file: "stream-error-frame.sse", text: "Once upon a time", calls: [], failure: "The server had an error" },
  { upstream: "anthropic-messages", file: "stream-overloaded-error.sse", text: "Hello", calls: [], failure: "Overloaded" },
  { upstream: "google-generate-content", file: "stream-unavailable-error.sse", text: "Partial answer", calls: [], failure: "overloaded" },
  { upstream: "openai-responses", file: "stream-failed.sse", text: "Partial answer", calls: [], failure: "failed to generate" },
];

function clientSse(sdkCase: SdkCase, client: ProtocolId): string {
  const upstreamText = readFixture(sdkCase.folder ?? sdkCase.upstream, sdkCase.file);
  return runStream({ upstream: sdkCase.upstream, client, passthrough: false, clientAskedUsage: true }, upstreamText, 1337, 60).out;
}

function fetchReturning(sse: string): typeof fetch {
  const stub = async () => new Response(sse, { status: 200, headers: { "content-type": "text/event-stream" } });
  return stub as unknown as typeof fetch;
}

function openaiFor(sse: string): OpenAI {
  return new OpenAI({ apiKey: "sk-test", baseURL: "http://switchyard.test/v1", maxRetries: 0, fetch: fetchReturning(sse) });
}

function anthropicFor(sse: string): Anthropic {
  return new Anthropic({ apiKey: "sk-ant-test", baseURL: "http://switchyard.test", maxRetries: 0, fetch: fetchReturning(sse) });
}

const MESSAGES = [{ role: "user" as const, content: "Weather and time in Paris?" }];

describe("the official SDK stream accumulators accept every translated stream", () => {
  for (const sdkCase of CASES) {
    const source = `${sdkCase.upstream} ${sdkCase.file}`;

    if (sdkCase.upstream !== "openai-chat") {
      test(`${source} → OpenAI ChatCompletionStream ${sdkCase.failure ? "rejects with the upstream error" : "accumulates text, tool calls, finish and usage"}`, async () => {
        const stream = openaiFor(clientSse(sdkCase, "openai-chat")).chat.completions.stream({
          model: "switchyard/client-model",
          messages: MESSAGES,
          stream_options: { include_usage: true },
        });
        if (sdkCase.failure !== undefined) {
          await expect(stream.finalChatCompletion()).rejects.toThrow(sdkCase.failure);
          return;
        }
        const completion = await stream.finalChatCompletion();
        const choice = completion.choices[0];
        expect(choice?.message.content ?? "").toBe(sdkCase.text);
        expect(
          (choice?.message.tool_calls ?? []).map((call) => (call.type === "function" ? { id: call.id, name: call.function.name, args: call.function.arguments } : {})),
        ).toEqual(sdkCase.calls);
        expect(choice?.finish_reason as string | undefined).toBe(sdkCase.finish?.chat);
        if (sdkCase.usage !== undefined) expect(completion.usage).toMatchObject(expectedWireUsage("openai-chat", sdkCase.usage));
      });
    }

    if (sdkCase.upstream !== "openai-responses") {
      test(`${source} → OpenAI ResponseStream ${sdkCase.failure ? "ends with a failed response" : "accumulates items, status and usage"}`, async () => {
        const stream = openaiFor(clientSse(sdkCase, "openai-responses")).responses.stream({ model: "switchyard/client-model", input: "Weather and time in Paris?" });
        let events = 0;
        stream.on("event", () => events++);
        if (sdkCase.failure !== undefined) {
          let failedMessage = "";
          stream.on("response.failed", (event) => {
            failedMessage = event.response.error?.message ?? "";
          });
          await stream.done().catch(() => undefined);
          expect(failedMessage).toContain(sdkCase.failure);
          return;
        }
        const response = await stream.finalResponse();
        expect(events).toBeGreaterThan(2);
        const text = response.output.flatMap((item) => (item.type === "message" ? item.content : [])).map((part) => (part.type === "output_text" ? part.text : "")).join("");
        expect(text).toBe(sdkCase.text);
        expect(
          response.output.flatMap((item) => (item.type === "function_call" ? [{ id: item.call_id, name: item.name, args: item.arguments }] : [])),
        ).toEqual(sdkCase.calls);
        expect(response.status as string).toBe(sdkCase.finish?.responses ?? "");
        if (sdkCase.usage !== undefined) expect(response.usage).toMatchObject(expectedWireUsage("openai-responses", sdkCase.usage));
      });
    }

    if (sdkCase.upstream !== "anthropic-messages") {
      test(`${source} → Anthropic MessageStream ${sdkCase.failure ? "rejects with the upstream error" : "accumulates blocks, stop_reason and usage"}`, async () => {
        const stream = anthropicFor(clientSse(sdkCase, "anthropic-messages")).messages.stream({
          model: "switchyard/client-model",
          max_tokens: 1024,
          messages: MESSAGES,
        });
        if (sdkCase.failure !== undefined) {
          await expect(stream.finalMessage()).rejects.toThrow(sdkCase.failure);
          return;
        }
        const message = await stream.finalMessage();
        const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
        expect(text).toBe(sdkCase.text);
        expect(
          message.content.flatMap((block) => (block.type === "tool_use" ? [{ id: block.id, name: block.name, args: JSON.stringify(block.input) }] : [])),
        ).toEqual(sdkCase.calls.map((call) => ({ ...call, args: JSON.stringify(JSON.parse(call.args)) })));
        expect(message.stop_reason as string).toBe(sdkCase.finish?.anthropic ?? "");
        if (sdkCase.usage !== undefined) expect(message.usage).toMatchObject(expectedWireUsage("anthropic-messages", sdkCase.usage));
      });
    }
  }
});
