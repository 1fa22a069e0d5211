/**
 * Tests of the upstream stand-ins themselves: if these bytes are wrong, every route, SDK
 * and benchmark test built on them is wrong too. SSE is parsed here by hand (no `src/`).
 */
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import {
  DEFAULT_TEXT,
  MULTI_MODEL_ID,
  REASONING_TEXT,
  catalogFor,
  mockProviderEnv,
  scenarioFromModel,
  startAllMockUpstreams,
  startMockUpstream,
  type MockUpstream,
  type MockUpstreamSet,
} from "./support/mock-upstreams";
import { RequestWaits } from "./support/mock-upstreams/request-waits";

interface Frame {
  event?: string;
  data: string;
}

/** Splits an SSE body on blank lines (LF or CRLF) and reads `event:` / `data:` lines. */
function parseSse(text: string): Frame[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const frame: Frame = { data: "" };
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event: ")) frame.event = line.slice("event: ".length);
        else if (line.startsWith("data: ")) frame.data = line.slice("data: ".length);
        else throw new Error(`unexpected SSE line: ${JSON.stringify(line)}`);
      }
      return frame;
    });
}

function payloads(frames: Frame[]): unknown[] {
  return frames.map((frame) => JSON.parse(frame.data) as unknown);
}

/** Walks into parsed JSON: get(body, "choices", 0, "message"). */
function get(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
}

/** Reads a body to its end or its failure, keeping what arrived. */
async function readUntilEnd(response: Response): Promise<{ text: string; failed: boolean }> {
  const reader = response.body?.getReader();
  if (reader === undefined) return { text: "", failed: false };
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, failed: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, failed: true };
  }
}

const ANTHROPIC_HEADERS = { "anthropic-version": "2023-06-01" };

let mocks: MockUpstreamSet;

beforeAll(async () => {
  mocks = await startAllMockUpstreams();
});

afterAll(async () => {
  await mocks.close();
});

beforeEach(() => {
  for (const mock of mocks.list) mock.setScenario({ kind: "text" });
});

const chatUrl = () => `${mocks.openai.baseUrl}/chat/completions`;
const responsesUrl = () => `${mocks.responses.baseUrl}/responses`;
const messagesUrl = () => `${mocks.anthropic.baseUrl}/messages`;
const geminiUrl = (model: string, stream = false) =>
  `${mocks.google.baseUrl}/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`;

describe("openai-chat mock", () => {
  test("a text completion has the chat.completion shape, a dated model and full usage", async () => {
    const response = await post(chatUrl(), { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const body = await response.json();
    expect(get(body, "id")).toMatch(/^chatcmpl-/);
    expect(get(body, "object")).toBe("chat.completion");
    expect(typeof get(body, "created")).toBe("number");
    expect(get(body, "model")).toBe("gpt-4o-mini-2024-07-18");
    expect(get(body, "system_fingerprint")).toMatch(/^fp_/);
    expect(get(body, "choices", 0)).toMatchObject({
      index: 0,
      message: { role: "assistant", content: DEFAULT_TEXT },
      finish_reason: "stop",
    });
    expect(get(body, "choices", 0, "message", "tool_calls")).toBeUndefined();
    expect(get(body, "usage")).toMatchObject({
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  test("a tool call completion has null content, tool_calls and finish_reason tool_calls", async () => {
    mocks.openai.setScenario({ kind: "tool_call" });
    const body = await (await post(chatUrl(), { model: "gpt-4o-mini", messages: [] })).json();
    const message = get(body, "choices", 0, "message");
    expect(get(message, "content")).toBeNull();
    expect(get(message, "tool_calls", 0, "id")).toMatch(/^call_/);
    expect(get(message, "tool_calls", 0)).toMatchObject({ type: "function", function: { name: "get_weather" } });
    expect(JSON.parse(String(get(message, "tool_calls", 0, "function", "arguments")))).toEqual({ location: "Paris" });
    expect(get(body, "choices", 0, "finish_reason")).toBe("tool_calls");
  });

  test("usage maps cache reads and reasoning into the details objects", async () => {
    mocks.openai.setScenario({ kind: "reasoning", usage: { prompt: 100, completion: 40, reasoning: 30, cacheRead: 60 } });
    const body = await (await post(chatUrl(), { model: "gpt-4o-mini", messages: [] })).json();
    expect(get(body, "choices", 0, "message", "reasoning_content")).toBe(REASONING_TEXT);
    expect(get(body, "usage")).toMatchObject({
      prompt_tokens: 100,
      completion_tokens: 40,
      total_tokens: 140,
      prompt_tokens_details: { cached_tokens: 60 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  test("a text stream without include_usage: role first, content pieces, finish, [DONE], no usage", async () => {
    const response = await post(chatUrl(), { model: "gpt-4o-mini", messages: [], stream: true });
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const text = await response.text();
    expect(text).not.toContain("\r\n");
    const frames = parseSse(text);
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const chunks = payloads(frames.slice(0, -1));
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(get(chunk, "object")).toBe("chat.completion.chunk");
      expect(get(chunk, "model")).toBe("gpt-4o-mini-2024-07-18");
      expect(chunk).not.toHaveProperty("usage");
    }
    expect(get(chunks[0], "choices", 0, "delta")).toMatchObject({ role: "assistant", content: "" });
    const contents = chunks.slice(1, -1).map((chunk) => get(chunk, "choices", 0, "delta", "content"));
    expect(contents.length).toBeGreaterThan(1);
    expect(contents.join("")).toBe(DEFAULT_TEXT);
    expect(get(chunks.at(-1), "choices", 0)).toMatchObject({ delta: {}, finish_reason: "stop" });
  });

  test("include_usage adds usage: null to every chunk and a final choices: [] usage chunk", async () => {
    const response = await post(chatUrl(), {
      model: "gpt-4o-mini",
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
    });
    const frames = parseSse(await response.text());
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const chunks = payloads(frames.slice(0, -1));
    const usageChunk = chunks.at(-1);
    expect(get(usageChunk, "choices")).toEqual([]);
    expect(get(usageChunk, "usage")).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect(get(chunks.at(-2), "choices", 0, "finish_reason")).toBe("stop");
    for (const chunk of chunks.slice(0, -1)) expect(get(chunk, "usage")).toBeNull();
  });

  test("finalChunkHasChoicesAndUsage puts usage in the finish_reason chunk", async () => {
    mocks.openai.setScenario({ kind: "text", finalChunkHasChoicesAndUsage: true });
    const response = await post(chatUrl(), {
      model: "gpt-4o-mini",
      messages: [],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = payloads(parseSse(await response.text()).slice(0, -1));
    const last = chunks.at(-1);
    expect(get(last, "choices", 0, "finish_reason")).toBe("stop");
    expect(get(last, "usage", "total_tokens")).toBe(17);
    expect(chunks.filter((chunk) => get(chunk, "choices", "length") === 0)).toHaveLength(0);
  });

  test("a tool call stream opens each call with id and name, then sends argument fragments only", async () => {
    mocks.openai.setScenario({ kind: "parallel_tool_calls" });
    const response = await post(chatUrl(), { model: "gpt-4o-mini", messages: [], stream: true });
    const frames = parseSse(await response.text());
    expect(frames.at(-1)?.data).toBe("[DONE]");
    const chunks = payloads(frames.slice(0, -1));
    expect(get(chunks[0], "choices", 0, "delta", "role")).toBe("assistant");
    const deltas = chunks.flatMap((chunk) => {
      const calls = get(chunk, "choices", 0, "delta", "tool_calls");
      return Array.isArray(calls) ? (calls as unknown[]) : [];
    });
    const byIndex = new Map<number, { id: unknown; name: unknown; args: string }>();
    for (const delta of deltas) {
      const index = Number(get(delta, "index"));
      const existing = byIndex.get(index);
      if (existing === undefined) {
        expect(delta).toMatchObject({ type: "function", function: { arguments: "" } });
        expect(get(delta, "id")).toMatch(/^call_/);
        byIndex.set(index, { id: get(delta, "id"), name: get(delta, "function", "name"), args: "" });
      } else {
        expect(Object.keys(delta as object).sort()).toEqual(["function", "index"]);
        expect(Object.keys(get(delta, "function") as object)).toEqual(["arguments"]);
        existing.args += String(get(delta, "function", "arguments"));
      }
    }
    expect([...byIndex.keys()]).toEqual([0, 1]);
    expect(byIndex.get(0)?.name).toBe("get_weather");
    expect(JSON.parse(byIndex.get(0)?.args ?? "")).toEqual({ location: "Paris" });
    expect(JSON.parse(byIndex.get(1)?.args ?? "")).toEqual({ location: "Tokyo" });
    expect(byIndex.get(0)?.id).not.toBe(byIndex.get(1)?.id);
    expect(get(chunks.at(-1), "choices", 0, "finish_reason")).toBe("tool_calls");
  });

  test("a reasoning stream sends DeepSeek-style reasoning_content before the content", async () => {
    mocks.openai.setScenario({ kind: "reasoning" });
    const response = await post(chatUrl(), { model: "deepseek-reasoner", messages: [], stream: true });
    const chunks = payloads(parseSse(await response.text()).slice(0, -1));
    const deltas = chunks.map((chunk) => get(chunk, "choices", 0, "delta"));
    const reasoning = deltas.map((delta) => get(delta, "reasoning_content")).filter((piece) => typeof piece === "string");
    expect(reasoning.join("")).toBe(REASONING_TEXT);
    const firstContent = deltas.findIndex((delta) => typeof get(delta, "content") === "string" && get(delta, "content") !== "");
    const lastReasoning = deltas.findLastIndex((delta) => typeof get(delta, "reasoning_content") === "string");
    expect(lastReasoning).toBeLessThan(firstContent);
  });

  test("max_tokens below the completion ends with finish_reason length", async () => {
    const body = await (await post(chatUrl(), { model: "gpt-4o-mini", messages: [], max_tokens: 3 })).json();
    expect(get(body, "choices", 0, "finish_reason")).toBe("length");
    expect(get(body, "usage", "completion_tokens")).toBe(3);
  });

  test.each([
    [429, "rate_limit_exceeded", "rate_limit_exceeded"],
    [500, "server_error", null],
    [400, "invalid_request_error", null],
    [401, "invalid_request_error", "invalid_api_key"],
  ])("error %d has the OpenAI envelope", async (status, type, code) => {
    mocks.openai.setScenario({ kind: "error", status, retryAfter: status === 429 ? 7 : undefined });
    const response = await post(chatUrl(), { model: "gpt-4o-mini", messages: [], stream: true });
    expect(response.status).toBe(status);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(response.headers.get("retry-after")).toBe(status === 429 ? "7" : null);
    const body = await response.json();
    expect(get(body, "error")).toMatchObject({ type, code, param: null });
    expect(typeof get(body, "error", "message")).toBe("string");
  });
});

describe("openai-responses mock", () => {
  test("a text response has the response object shape and usage", async () => {
    const body = await (await post(responsesUrl(), { model: "gpt-5-mini", input: "hi" })).json();
    expect(get(body, "id")).toMatch(/^resp_/);
    expect(body).toMatchObject({ object: "response", status: "completed", model: "gpt-5-mini-2025-08-07" });
    expect(typeof get(body, "created_at")).toBe("number");
    expect(get(body, "output")).toHaveLength(1);
    expect(get(body, "output", 0, "id")).toMatch(/^msg_/);
    expect(get(body, "output", 0)).toMatchObject({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: DEFAULT_TEXT, annotations: [] }],
    });
    expect(get(body, "usage")).toEqual({
      input_tokens: 12,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 17,
    });
  });

  test("tool call and reasoning responses carry function_call and reasoning items", async () => {
    mocks.responses.setScenario({ kind: "tool_call" });
    const tool = await (await post(responsesUrl(), { model: "gpt-5-mini", input: "weather?" })).json();
    expect(get(tool, "output")).toHaveLength(1);
    expect(get(tool, "output", 0)).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
    expect(get(tool, "output", 0, "id")).toMatch(/^fc_/);
    expect(get(tool, "output", 0, "call_id")).toMatch(/^call_/);
    expect(JSON.parse(String(get(tool, "output", 0, "arguments")))).toEqual({ location: "Paris" });

    mocks.responses.setScenario({ kind: "reasoning" });
    const reasoning = await (await post(responsesUrl(), { model: "o4-mini", input: "hi" })).json();
    expect(get(reasoning, "output", 0, "type")).toBe("reasoning");
    expect(get(reasoning, "output", 0, "summary")).toEqual([{ type: "summary_text", text: REASONING_TEXT }]);
    expect(get(reasoning, "output", 1, "type")).toBe("message");
    expect(get(reasoning, "usage", "output_tokens_details", "reasoning_tokens")).toBe(2);
  });

  test("a text stream follows the documented event order with sequence numbers from 0", async () => {
    const response = await post(responsesUrl(), { model: "gpt-5-mini", input: "hi", stream: true });
    const text = await response.text();
    expect(text).not.toContain("[DONE]");
    const frames = parseSse(text);
    const events = frames.map((frame) => frame.event);
    const deltas = events.filter((event) => event === "response.output_text.delta").length;
    expect(deltas).toBeGreaterThan(1);
    expect(events).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array<string>(deltas).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const data = payloads(frames);
    data.forEach((payload, index) => {
      expect(get(payload, "sequence_number")).toBe(index);
      expect(get(payload, "type")).toBe(events[index]);
    });
    const streamed = data.filter((payload) => get(payload, "type") === "response.output_text.delta");
    expect(streamed.map((payload) => get(payload, "delta")).join("")).toBe(DEFAULT_TEXT);
    const completed = data.at(-1);
    expect(get(completed, "response", "status")).toBe("completed");
    expect(get(completed, "response", "usage", "total_tokens")).toBe(17);
    expect(get(completed, "response", "output", 0, "content", 0, "text")).toBe(DEFAULT_TEXT);
    expect(get(data[0], "response", "status")).toBe("in_progress");
  });

  test("a function call stream: item added, argument deltas, arguments done, item done", async () => {
    mocks.responses.setScenario({ kind: "tool_call" });
    const frames = parseSse(await (await post(responsesUrl(), { model: "gpt-5-mini", input: "x", stream: true })).text());
    const events = frames.map((frame) => frame.event);
    const deltas = events.filter((event) => event === "response.function_call_arguments.delta").length;
    expect(events).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      ...Array<string>(deltas).fill("response.function_call_arguments.delta"),
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const data = payloads(frames);
    expect(get(data[2], "item")).toMatchObject({ type: "function_call", name: "get_weather", arguments: "", status: "in_progress" });
    const args = data
      .filter((payload) => get(payload, "type") === "response.function_call_arguments.delta")
      .map((payload) => get(payload, "delta"))
      .join("");
    expect(JSON.parse(args)).toEqual({ location: "Paris" });
    expect(get(data.at(-1), "response", "output", 0, "type")).toBe("function_call");
  });

  test("a reasoning stream sends the summary events before the message item", async () => {
    mocks.responses.setScenario({ kind: "reasoning" });
    const frames = parseSse(await (await post(responsesUrl(), { model: "o4-mini", input: "x", stream: true })).text());
    const events = [...new Set(frames.map((frame) => frame.event))];
    expect(events).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.completed",
    ]);
  });

  test("max_output_tokens below the completion ends with response.incomplete", async () => {
    const frames = parseSse(
      await (await post(responsesUrl(), { model: "gpt-5-mini", input: "x", stream: true, max_output_tokens: 2 })).text(),
    );
    expect(frames.at(-1)?.event).toBe("response.incomplete");
    const final = JSON.parse(frames.at(-1)?.data ?? "null") as unknown;
    expect(get(final, "response", "incomplete_details")).toEqual({ reason: "max_output_tokens" });
  });

  test("errors use the OpenAI envelope", async () => {
    mocks.responses.setScenario({ kind: "error", status: 500 });
    const response = await post(responsesUrl(), { model: "gpt-5-mini", input: "x" });
    expect(response.status).toBe(500);
    expect(get(await response.json(), "error", "type")).toBe("server_error");
  });
});

describe("anthropic-messages mock", () => {
  test("anthropic-version is required, as Anthropic does", async () => {
    const response = await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 64, messages: [] });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(String(get(body, "error", "message"))).toContain("anthropic-version");
  });

  test("a text message has the message shape, a dated model and exclusive input_tokens", async () => {
    mocks.anthropic.setScenario({ kind: "text", usage: { prompt: 100, completion: 20, cacheRead: 60, cacheWrite: 30 } });
    const response = await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 64, messages: [] }, ANTHROPIC_HEADERS);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(get(body, "id")).toMatch(/^msg_/);
    expect(body).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [{ type: "text", text: DEFAULT_TEXT }],
      stop_reason: "end_turn",
      stop_sequence: null,
    });
    expect(get(body, "usage")).toMatchObject({
      input_tokens: 10,
      cache_read_input_tokens: 60,
      cache_creation_input_tokens: 30,
      output_tokens: 20,
    });
  });

  test("tool_use and thinking blocks, with stop_reason tool_use for a mixed turn", async () => {
    mocks.anthropic.setScenario({ kind: "tool_call", text: "Let me check." });
    const tool = await (
      await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 64, messages: [] }, ANTHROPIC_HEADERS)
    ).json();
    expect(get(tool, "content")).toMatchObject([
      { type: "text", text: "Let me check." },
      { type: "tool_use", name: "get_weather", input: { location: "Paris" } },
    ]);
    expect(get(tool, "content", 1, "id")).toMatch(/^toolu_/);
    expect(get(tool, "stop_reason")).toBe("tool_use");

    mocks.anthropic.setScenario({ kind: "reasoning" });
    const thinking = await (
      await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 64, messages: [] }, ANTHROPIC_HEADERS)
    ).json();
    expect(get(thinking, "content", 0)).toMatchObject({ type: "thinking", thinking: REASONING_TEXT });
    expect(String(get(thinking, "content", 0, "signature")).length).toBeGreaterThan(20);
    expect(get(thinking, "content", 1, "type")).toBe("text");
  });

  test("a text stream follows the documented event order", async () => {
    mocks.anthropic.setScenario({ kind: "text", usage: { prompt: 50, completion: 9, cacheRead: 20 } });
    const response = await post(
      messagesUrl(),
      { model: "claude-sonnet-4-5", max_tokens: 64, messages: [], stream: true },
      ANTHROPIC_HEADERS,
    );
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const frames = parseSse(await response.text());
    const events = frames.map((frame) => frame.event);
    const deltas = events.filter((event) => event === "content_block_delta").length;
    expect(deltas).toBeGreaterThan(1);
    expect(events).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      ...Array<string>(deltas).fill("content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const data = payloads(frames);
    data.forEach((payload, index) => expect(get(payload, "type")).toBe(events[index]));
    expect(get(data[0], "message")).toMatchObject({ model: "claude-sonnet-4-5-20250929", content: [], stop_reason: null });
    expect(get(data[0], "message", "usage")).toMatchObject({
      input_tokens: 30,
      cache_read_input_tokens: 20,
      cache_creation_input_tokens: 0,
      output_tokens: 1,
    });
    expect(get(data[1], "content_block")).toEqual({ type: "text", text: "" });
    const text = data
      .filter((payload) => get(payload, "type") === "content_block_delta")
      .map((payload) => get(payload, "delta", "text"))
      .join("");
    expect(text).toBe(DEFAULT_TEXT);
    expect(data.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 9 },
    });
  });

  test("a thinking + tool stream: thinking deltas then signature, input_json_delta fragments, tool_use", async () => {
    mocks.anthropic.setScenario({ kind: "tool_call" });
    const toolFrames = parseSse(
      await (
        await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 64, messages: [], stream: true }, ANTHROPIC_HEADERS)
      ).text(),
    );
    const toolData = payloads(toolFrames);
    expect(get(toolData[1], "content_block")).toMatchObject({ type: "tool_use", name: "get_weather", input: {} });
    const partials = toolData
      .filter((payload) => get(payload, "delta", "type") === "input_json_delta")
      .map((payload) => String(get(payload, "delta", "partial_json")));
    expect(partials[0]).toBe("");
    expect(partials.length).toBeGreaterThan(2);
    expect(JSON.parse(partials.join(""))).toEqual({ location: "Paris" });
    expect(get(toolData.at(-2), "delta", "stop_reason")).toBe("tool_use");

    mocks.anthropic.setScenario({ kind: "reasoning" });
    const thinkingData = payloads(
      parseSse(
        await (
          await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 64, messages: [], stream: true }, ANTHROPIC_HEADERS)
        ).text(),
      ),
    );
    const block0 = thinkingData
      .filter((payload) => get(payload, "type") === "content_block_delta" && get(payload, "index") === 0)
      .map((payload) => String(get(payload, "delta", "type")));
    expect(block0.at(-1)).toBe("signature_delta");
    expect(new Set(block0.slice(0, -1))).toEqual(new Set(["thinking_delta"]));
    const starts = thinkingData.filter((payload) => get(payload, "type") === "content_block_start");
    expect(starts.map((payload) => get(payload, "content_block", "type"))).toEqual(["thinking", "text"]);
    expect(starts.map((payload) => get(payload, "index"))).toEqual([0, 1]);
  });

  test("max_tokens below the completion stops with max_tokens", async () => {
    const body = await (
      await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 2, messages: [] }, ANTHROPIC_HEADERS)
    ).json();
    expect(get(body, "stop_reason")).toBe("max_tokens");
  });

  test.each([
    [429, "rate_limit_error"],
    [529, "overloaded_error"],
    [500, "api_error"],
    [400, "invalid_request_error"],
    [401, "authentication_error"],
  ])("error %d has the Anthropic envelope", async (status, type) => {
    mocks.anthropic.setScenario({ kind: "error", status, retryAfter: status === 429 ? 3 : undefined });
    const response = await post(messagesUrl(), { model: "claude-sonnet-4-5", max_tokens: 8, messages: [] }, ANTHROPIC_HEADERS);
    expect(response.status).toBe(status);
    expect(response.headers.get("retry-after")).toBe(status === 429 ? "3" : null);
    const body = await response.json();
    expect(body).toMatchObject({ type: "error", error: { type } });
    expect(get(body, "request_id")).toBe(response.headers.get("request-id"));
  });
});

describe("google-generate-content mock", () => {
  test("a text response has candidates, usageMetadata, modelVersion and responseId", async () => {
    const response = await post(geminiUrl("gemini-2.5-flash"), { contents: [{ role: "user", parts: [{ text: "hi" }] }] });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(get(body, "candidates", 0)).toEqual({
      content: { parts: [{ text: DEFAULT_TEXT }], role: "model" },
      finishReason: "STOP",
      index: 0,
    });
    expect(get(body, "usageMetadata")).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 5, totalTokenCount: 17 });
    expect(get(body, "usageMetadata", "thoughtsTokenCount")).toBeUndefined();
    expect(get(body, "modelVersion")).toBe("gemini-2.5-flash-001");
    expect(typeof get(body, "responseId")).toBe("string");
  });

  test("candidatesTokenCount excludes thoughts; thought parts are flagged", async () => {
    mocks.google.setScenario({ kind: "reasoning", usage: { prompt: 40, completion: 30, reasoning: 20, cacheRead: 10 } });
    const body = await (await post(geminiUrl("gemini-2.5-pro"), { contents: [] })).json();
    expect(get(body, "candidates", 0, "content", "parts")).toEqual([
      { text: REASONING_TEXT, thought: true },
      { text: DEFAULT_TEXT },
    ]);
    expect(get(body, "usageMetadata")).toMatchObject({
      promptTokenCount: 40,
      candidatesTokenCount: 10,
      thoughtsTokenCount: 20,
      cachedContentTokenCount: 10,
      totalTokenCount: 70,
    });
  });

  test("a function call has no id and still finishes with STOP", async () => {
    mocks.google.setScenario({ kind: "parallel_tool_calls" });
    const body = await (await post(geminiUrl("gemini-2.5-flash"), { contents: [] })).json();
    expect(get(body, "candidates", 0, "content", "parts")).toEqual([
      { functionCall: { name: "get_weather", args: { location: "Paris" } } },
      { functionCall: { name: "get_weather", args: { location: "Tokyo" } } },
    ]);
    expect(get(body, "candidates", 0, "finishReason")).toBe("STOP");
  });

  test("an SSE stream uses CRLF, usage on every chunk, finishReason only on the last", async () => {
    const response = await post(geminiUrl("gemini-2.5-flash", true), { contents: [] });
    expect(response.headers.get("content-type")).toStartWith("text/event-stream");
    const text = await response.text();
    expect(text).toEndWith("\r\n\r\n");
    expect(text.replaceAll("\r\n", "")).not.toContain("\n");
    expect(text).not.toContain("[DONE]");
    const chunks = payloads(parseSse(text));
    expect(chunks.length).toBeGreaterThan(1);
    const texts = chunks.map((chunk) => get(chunk, "candidates", 0, "content", "parts", 0, "text"));
    expect(texts.join("")).toBe(DEFAULT_TEXT);
    let previous = 0;
    chunks.forEach((chunk, index) => {
      const usage = get(chunk, "usageMetadata");
      expect(get(usage, "promptTokenCount")).toBe(12);
      const candidates = Number(get(usage, "candidatesTokenCount"));
      expect(candidates).toBeGreaterThanOrEqual(previous);
      previous = candidates;
      const last = index === chunks.length - 1;
      expect(get(chunk, "candidates", 0, "finishReason")).toBe(last ? "STOP" : undefined);
    });
    expect(previous).toBe(5);
  });

  test("a streamed function call arrives whole in one chunk", async () => {
    mocks.google.setScenario({ kind: "tool_call" });
    const chunks = payloads(parseSse(await (await post(geminiUrl("gemini-2.5-flash", true), { contents: [] })).text()));
    expect(chunks).toHaveLength(1);
    expect(get(chunks[0], "candidates", 0, "content", "parts")).toEqual([
      { functionCall: { name: "get_weather", args: { location: "Paris" } } },
    ]);
    expect(get(chunks[0], "candidates", 0, "finishReason")).toBe("STOP");
  });

  test("streamGenerateContent without alt=sse answers one JSON array", async () => {
    const response = await post(`${mocks.google.baseUrl}/models/gemini-2.5-flash:streamGenerateContent`, { contents: [] });
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const chunks = (await response.json()) as unknown[];
    expect(Array.isArray(chunks)).toBe(true);
    expect(chunks.map((chunk) => get(chunk, "candidates", 0, "content", "parts", 0, "text")).join("")).toBe(DEFAULT_TEXT);
  });

  test.each([
    [429, "RESOURCE_EXHAUSTED"],
    [500, "INTERNAL"],
    [400, "INVALID_ARGUMENT"],
    [401, "UNAUTHENTICATED"],
    [503, "UNAVAILABLE"],
  ])("error %d has the google.rpc.Status envelope", async (status, statusName) => {
    mocks.google.setScenario({ kind: "error", status });
    const response = await post(geminiUrl("gemini-2.5-flash", true), { contents: [] });
    expect(response.status).toBe(status);
    expect(get(await response.json(), "error")).toMatchObject({ code: status, status: statusName });
  });
});

describe("scenario selection", () => {
  test("the @kind suffix grammar", () => {
    expect(scenarioFromModel("gpt-4o-mini@tool_call")).toEqual({ baseModel: "gpt-4o-mini", selected: { kind: "tool_call" } });
    expect(scenarioFromModel("m@error429")).toEqual({ baseModel: "m", selected: { kind: "error", status: 429 } });
    expect(scenarioFromModel("m@stream-cut3")).toEqual({ baseModel: "m", selected: { kind: "stream_cut", cutAfterChunks: 3 } });
    expect(scenarioFromModel("m@slow250")).toEqual({ baseModel: "m", selected: { kind: "slow", delayMs: 250 } });
    expect(scenarioFromModel("m@paced3")).toEqual({ baseModel: "m", selected: { kind: "text", text: "token0 token1 token2", chunkDelayMs: 1 } });
    expect(scenarioFromModel("m@paced").selected).toBeUndefined();
    expect(scenarioFromModel("m@hang7").selected).toBeUndefined();
    expect(scenarioFromModel("user@example").selected).toBeUndefined();
    expect(scenarioFromModel("gpt-4o-mini")).toEqual({ baseModel: "gpt-4o-mini", selected: undefined });
  });

  test("a model suffix selects the scenario on every protocol and the base model is echoed", async () => {
    const chat = await post(chatUrl(), { model: "gpt-4o-mini@error429", messages: [] });
    expect(chat.status).toBe(429);
    const tool = await (await post(chatUrl(), { model: "gpt-4o-mini@tool_call", messages: [] })).json();
    expect(get(tool, "choices", 0, "finish_reason")).toBe("tool_calls");
    expect(get(tool, "model")).toBe("gpt-4o-mini-2024-07-18");
    const responses = await post(responsesUrl(), { model: "gpt-5-mini@error500", input: "x" });
    expect(responses.status).toBe(500);
    const messages = await post(messagesUrl(), { model: "claude-sonnet-4-5@error529", max_tokens: 8, messages: [] }, ANTHROPIC_HEADERS);
    expect(messages.status).toBe(529);
    const gemini = await (await post(geminiUrl("gemini-2.5-flash@reasoning"), { contents: [] })).json();
    expect(get(gemini, "candidates", 0, "content", "parts", 0, "thought")).toBe(true);
    expect(get(gemini, "modelVersion")).toBe("gemini-2.5-flash-001");
  });

  test("queued scenarios are consumed in order, then the default applies; suffixes do not consume", async () => {
    mocks.openai.queueScenarios({ kind: "error", status: 503 }, { kind: "tool_call" });
    expect((await post(chatUrl(), { model: "m@reasoning", messages: [] })).status).toBe(200);
    expect((await post(chatUrl(), { model: "m", messages: [] })).status).toBe(503);
    const second = await (await post(chatUrl(), { model: "m", messages: [] })).json();
    expect(get(second, "choices", 0, "finish_reason")).toBe("tool_calls");
    const third = await (await post(chatUrl(), { model: "m", messages: [] })).json();
    expect(get(third, "choices", 0, "message", "content")).toBe(DEFAULT_TEXT);
  });

  test("one mock serves concurrent requests with different scenarios", async () => {
    const models = ["a@text", "b@tool_call", "c@error500", "d@reasoning", "e@error429"];
    const statuses = await Promise.all(
      models.map(async (model) => (await post(chatUrl(), { model, messages: [], stream: true })).status),
    );
    expect(statuses).toEqual([200, 200, 500, 200, 429]);
  });
});

describe("connection behaviour", () => {
  test("hang sends nothing until the client aborts, then the mock keeps serving", async () => {
    const controller = new AbortController();
    const started = performance.now();
    const pending = post(chatUrl(), { model: "m@hang", messages: [] }, {}, controller.signal);
    setTimeout(() => controller.abort(), 150);
    const outcome = await pending.then(
      () => "answered",
      (error: unknown) => (error instanceof Error ? error.name : "failed"),
    );
    expect(outcome).toBe("AbortError");
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect((await post(chatUrl(), { model: "m", messages: [] })).status).toBe(200);
  });

  test("close() ends hung requests and frees the port", async () => {
    const mock = await startMockUpstream("anthropic-messages", { scenario: { kind: "hang" } });
    const pending = post(`${mock.baseUrl}/messages`, { model: "c", max_tokens: 8, messages: [] }, ANTHROPIC_HEADERS).then(
      () => "answered",
      () => "failed",
    );
    // The mock holds the request (not merely a connection) before it is closed.
    for (let polls = 0; mock.requests.length === 0; polls++) {
      if (polls > 1_000) throw new Error("the request never reached the mock");
      await Bun.sleep(10);
    }
    const started = performance.now();
    await mock.close();
    // Not waiting on the hung request: a hang never ends; a loaded machine takes a few seconds at worst.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await pending).toBe("failed");
    expect(mock.requests).toHaveLength(1);
    const afterClose = await fetch(`${mock.baseUrl}/messages`, { method: "POST" }).then(
      () => "answered",
      () => "refused",
    );
    expect(afterClose).toBe("refused");
  });

  test("waits are released on abort and on releaseAll, leaving no timers", async () => {
    const waits = new RequestWaits();
    const controller = new AbortController();
    const aborted = waits.wait(Number.POSITIVE_INFINITY, controller.signal);
    const released = waits.wait(60_000, new AbortController().signal);
    expect(waits.size).toBe(2);
    controller.abort();
    await aborted;
    expect(waits.size).toBe(1);
    waits.releaseAll();
    await released;
    expect(waits.size).toBe(0);
  });

  test.each(["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"] as const)(
    "stream_cut on %s sends N frames then resets without the terminal frame",
    async (protocol) => {
      const mock = { "openai-chat": mocks.openai, "openai-responses": mocks.responses, "anthropic-messages": mocks.anthropic, "google-generate-content": mocks.google }[protocol];
      mock.setScenario({ kind: "stream_cut", cutAfterChunks: 2 });
      const response =
        protocol === "google-generate-content"
          ? await post(geminiUrl("gemini-2.5-flash", true), { contents: [] })
          : await post(
              protocol === "openai-chat" ? chatUrl() : protocol === "openai-responses" ? responsesUrl() : messagesUrl(),
              { model: "m", messages: [], input: "x", max_tokens: 64, stream: true, stream_options: { include_usage: true } },
              ANTHROPIC_HEADERS,
            );
      expect(response.status).toBe(200);
      const { text, failed } = await readUntilEnd(response);
      expect(failed).toBe(true);
      const frames = parseSse(text);
      expect(frames).toHaveLength(2);
      const terminal = ["[DONE]", "message_stop", "response.completed"];
      for (const frame of frames) {
        expect(terminal).not.toContain(frame.data);
        expect(terminal).not.toContain(frame.event);
        expect(frame.data).not.toContain("finishReason");
      }
    },
  );

  test("stream_cut without cutAfterChunks cuts halfway; a non-streaming body is cut too", async () => {
    const streamed = await readUntilEnd(await post(chatUrl(), { model: "m@stream_cut", messages: [], stream: true }));
    expect(streamed.failed).toBe(true);
    expect(streamed.text).not.toContain("[DONE]");
    expect(parseSse(streamed.text).length).toBeGreaterThan(1);

    const whole = await readUntilEnd(await post(chatUrl(), { model: "m@stream_cut", messages: [] }));
    expect(whole.failed).toBe(true);
    expect(() => JSON.parse(whole.text) as unknown).toThrow();
  });

  test("stream_error sends part of the turn, then the vendor's mid-stream error frame, and ends cleanly", async () => {
    const chat = await readUntilEnd(await post(chatUrl(), { model: "m@stream_error3", messages: [], stream: true }));
    expect(chat.failed).toBe(false);
    const chatFrames = parseSse(chat.text);
    expect(chatFrames).toHaveLength(4);
    expect(get(JSON.parse(chatFrames[3]!.data), "error", "type")).toBe("server_error");

    const messages = await readUntilEnd(await post(messagesUrl(), { model: "c@stream_error", max_tokens: 64, messages: [], stream: true }, ANTHROPIC_HEADERS));
    const last = parseSse(messages.text).at(-1)!;
    expect(last.event).toBe("error");
    expect(JSON.parse(last.data)).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });

    const responses = parseSse((await readUntilEnd(await post(responsesUrl(), { model: "r@stream_error", input: "x", stream: true }))).text);
    const failed = JSON.parse(responses.at(-1)!.data);
    expect(responses.at(-1)!.event).toBe("response.failed");
    expect(failed).toMatchObject({ type: "response.failed", sequence_number: responses.length - 1, response: { status: "failed", error: { code: "server_error" } } });
    expect(get(failed, "response", "id")).toBe(get(JSON.parse(responses[0]!.data), "response", "id"));

    const gemini = await readUntilEnd(await post(geminiUrl("g@stream_error", true), { contents: [] }));
    expect(gemini.text.endsWith('"status":"UNAVAILABLE"}}\r\n\r\n')).toBe(true);
    expect(get(JSON.parse(parseSse(gemini.text).at(-1)!.data), "error", "code")).toBe(503);
  });

  test("flood repeats one text delta, renumbering Responses events; it is generated only as it is read", async () => {
    const responses = parseSse(await (await post(responsesUrl(), { model: "r@flood50", input: "x", stream: true })).text());
    expect(responses.map((frame) => get(JSON.parse(frame.data), "sequence_number"))).toEqual(responses.map((_, index) => index));
    expect(responses.filter((frame) => frame.event === "response.output_text.delta")).toHaveLength(51);

    const before = mocks.openai.requests.length;
    const response = await post(chatUrl(), { model: "m@flood1000000", messages: [], stream: true });
    const reader = response.body!.getReader();
    let read = 0;
    while (read < 256 * 1024) read += (await reader.read()).value!.byteLength;
    // A million ~1 KB frames (about 1 GB): what is generated is what the reader took plus
    // the socket buffers. Wait (bounded) until the count stops growing, as it does once the
    // buffers are full; on a loaded machine that takes longer than on an idle one.
    const streamed = () => mocks.openai.requests[before]!.streamedBytes;
    let sent = -1;
    for (let poll = 0; poll < 50 && streamed() !== sent; poll++) {
      sent = streamed();
      await Bun.sleep(100);
    }
    expect(sent).toBeGreaterThanOrEqual(read);
    expect(sent).toBeLessThan(100 * 1024 * 1024);
    await Bun.sleep(200);
    expect(streamed()).toBeLessThan(100 * 1024 * 1024);
    await reader.cancel();
  });

  test("slow delays the first byte by delayMs; chunkDelayMs spaces the frames", async () => {
    const started = performance.now();
    const response = await post(chatUrl(), { model: "m@slow200", messages: [] });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(response.status).toBe(200);

    mocks.anthropic.setScenario({ kind: "text", chunkDelayMs: 20 });
    const streamStart = performance.now();
    const frames = parseSse(
      await (
        await post(messagesUrl(), { model: "c", max_tokens: 64, messages: [], stream: true }, ANTHROPIC_HEADERS)
      ).text(),
    );
    expect(performance.now() - streamStart).toBeGreaterThanOrEqual((frames.length - 1) * 20 - 10);
  });

  test("unknown paths get the vendor's 404", async () => {
    const openai = await post(`${mocks.openai.baseUrl}/completions`, { model: "m" });
    expect(openai.status).toBe(404);
    expect(get(await openai.json(), "error", "type")).toBe("invalid_request_error");
    const google = await post(`${mocks.google.baseUrl}/models/gemini-2.5-flash`, {});
    expect(google.status).toBe(404);
    expect(get(await google.json(), "error", "status")).toBe("NOT_FOUND");
  });
});

describe("recording and credentials", () => {
  test("every request is recorded with method, path, search, lower-cased headers and body", async () => {
    const before = mocks.google.requests.length;
    await post(geminiUrl("gemini-2.5-flash", true), { contents: [{ parts: [{ text: "hi" }] }] }, { "X-Goog-Api-Key": "k1" });
    const recorded = mocks.google.requests[before];
    expect(recorded).toMatchObject({
      method: "POST",
      path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
      search: "?alt=sse",
      body: { contents: [{ parts: [{ text: "hi" }] }] },
    });
    expect(recorded?.headers["x-goog-api-key"]).toBe("k1");
  });

  const KEY_CASES = [
    ["openai-chat", "/chat/completions", { authorization: "Bearer secret" }, { authorization: "Bearer wrong" }],
    ["openai-responses", "/responses", { authorization: "Bearer secret" }, {}],
    ["anthropic-messages", "/messages", { "x-api-key": "secret", ...ANTHROPIC_HEADERS }, { "x-api-key": "wrong", ...ANTHROPIC_HEADERS }],
    ["google-generate-content", "/models/g:generateContent", { "x-goog-api-key": "secret" }, { "x-goog-api-key": "wrong" }],
  ] as const;

  test.each(KEY_CASES)("%s checks its own credential header", async (protocol, path, good, bad) => {
    const mock: MockUpstream = await startMockUpstream(protocol, { apiKey: "secret" });
    try {
      const body = { model: "m", messages: [], input: "x", max_tokens: 8, contents: [] };
      const ok = await post(`${mock.baseUrl}${path}`, body, good);
      expect(ok.status).toBe(200);
      const rejected = await post(`${mock.baseUrl}${path}`, body, bad);
      expect(rejected.status).toBe(401);
      const error = await rejected.json();
      if (protocol === "anthropic-messages") expect(get(error, "error", "type")).toBe("authentication_error");
      else if (protocol === "google-generate-content") expect(get(error, "error", "status")).toBe("UNAUTHENTICATED");
      else expect(get(error, "error", "type")).toBe("invalid_request_error");
      expect(mock.requests).toHaveLength(2);
    } finally {
      await mock.close();
    }
  });
  test("anthropic also accepts the key as Authorization: Bearer, as current SDKs send it", async () => {
    const mock = await startMockUpstream("anthropic-messages", { apiKey: "secret" });
    try {
      const body = { model: "c", max_tokens: 8, messages: [] };
      const url = `${mock.baseUrl}/messages`;
      expect((await post(url, body, { authorization: "Bearer secret", ...ANTHROPIC_HEADERS })).status).toBe(200);
      expect((await post(url, body, { authorization: "Bearer wrong", ...ANTHROPIC_HEADERS })).status).toBe(401);
      expect((await post(url, body, ANTHROPIC_HEADERS)).status).toBe(401);
    } finally {
      await mock.close();
    }
  });
});

describe("catalogFor", () => {
  test("one BYOK provider per mock, priced models, scenario variants and a two-endpoint model", () => {
    const catalog = catalogFor(mocks);
    expect(catalog.providers).toEqual([
      { id: "mock-openai", name: "Mock OpenAI", protocol: "openai-chat", base_url: mocks.openai.baseUrl, api_key_env: "MOCK_OPENAI_API_KEY", byok: true },
      { id: "mock-responses", name: "Mock OpenAI Responses", protocol: "openai-responses", base_url: mocks.responses.baseUrl, api_key_env: "MOCK_RESPONSES_API_KEY", byok: true },
      { id: "mock-anthropic", name: "Mock Anthropic", protocol: "anthropic-messages", base_url: mocks.anthropic.baseUrl, api_key_env: "MOCK_ANTHROPIC_API_KEY", byok: true },
      { id: "mock-google", name: "Mock Google", protocol: "google-generate-content", base_url: mocks.google.baseUrl, api_key_env: "MOCK_GOOGLE_API_KEY", byok: true },
    ]);
    const byId = new Map(catalog.models.map((model) => [model.id, model]));
    expect(byId.get("mock-openai/gpt-4o-mini")?.endpoints).toEqual([
      { provider: "mock-openai", provider_model_id: "gpt-4o-mini", pricing: { input: 0.15, output: 0.6, cache_read: 0.075, cache_write: 0 } },
    ]);
    expect(byId.get("mock-anthropic/claude-sonnet-4-5@error429")?.endpoints[0]?.provider_model_id).toBe("claude-sonnet-4-5@error429");
    for (const model of catalog.models) {
      for (const endpoint of model.endpoints) {
        expect(model.id === MULTI_MODEL_ID || model.id === `${endpoint.provider}/${endpoint.provider_model_id}`).toBe(true);
      }
    }
    const multi = byId.get(MULTI_MODEL_ID);
    expect(multi?.endpoints.map((endpoint) => endpoint.provider)).toEqual(["mock-openai", "mock-anthropic"]);
    expect(multi?.endpoints[0]?.pricing.input).not.toBe(multi?.endpoints[1]?.pricing.input);
    expect(catalogFor(mocks, { scenarioSuffixes: [] }).models.some((model) => model.id.includes("@"))).toBe(false);
    expect(catalogFor([mocks.google]).models.some((model) => model.id === MULTI_MODEL_ID)).toBe(false);
    expect(mockProviderEnv("k")).toEqual({
      MOCK_OPENAI_API_KEY: "k",
      MOCK_RESPONSES_API_KEY: "k",
      MOCK_ANTHROPIC_API_KEY: "k",
      MOCK_GOOGLE_API_KEY: "k",
    });
  });
});

describe("the vendors' own SDKs accept the mock bytes", () => {
  test("openai: chat stream with parallel tool calls and usage, Responses stream with reasoning", async () => {
    const chat = new OpenAI({ apiKey: "k", baseURL: mocks.openai.baseUrl, maxRetries: 0 });
    const completion = await chat.chat.completions
      .stream({
        model: "gpt-4o-mini@parallel_tool_calls",
        messages: [{ role: "user", content: "weather?" }],
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    expect(completion.choices[0]?.message.tool_calls?.map((call) => call.type === "function" && call.function.arguments)).toEqual([
      '{"location":"Paris"}',
      '{"location":"Tokyo"}',
    ]);
    expect(completion.usage?.total_tokens).toBe(17);

    const responses = new OpenAI({ apiKey: "k", baseURL: mocks.responses.baseUrl, maxRetries: 0 });
    const response = await responses.responses.stream({ model: "o4-mini@reasoning", input: "hi" }).finalResponse();
    expect(response.output_text).toBe(DEFAULT_TEXT);
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(2);
  });

  test("anthropic: streamed thinking + text, streamed tool_use, typed 529 error", async () => {
    const client = new Anthropic({ apiKey: "k", baseURL: mocks.anthropic.baseUrl.replace(/\/v1$/, ""), maxRetries: 0 });
    const params = { max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };
    const thinking = await client.messages.stream({ model: "claude-sonnet-4-5@reasoning", ...params }).finalMessage();
    expect(thinking.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    const tool = await client.messages.stream({ model: "claude-sonnet-4-5@tool_call", ...params }).finalMessage();
    expect(tool.content[0]).toMatchObject({ type: "tool_use", input: { location: "Paris" } });
    expect(tool.stop_reason).toBe("tool_use");
    const failure = await client.messages.create({ model: "claude-sonnet-4-5@error529", ...params }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    expect(get(failure, "status")).toBe(529);
  });

  test("google: SSE stream with thoughts, whole function call", async () => {
    const client = new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: mocks.google.baseUrl.replace(/\/v1beta$/, "") } });
    let text = "";
    let usage: unknown;
    for await (const chunk of await client.models.generateContentStream({ model: "gemini-2.5-flash@reasoning", contents: "hi" })) {
      text += chunk.text ?? "";
      usage = chunk.usageMetadata;
    }
    expect(text).toBe(DEFAULT_TEXT);
    expect(usage).toMatchObject({ candidatesTokenCount: 3, thoughtsTokenCount: 2, totalTokenCount: 17 });
    const tool = await client.models.generateContent({ model: "gemini-2.5-flash@tool_call", contents: "hi" });
    expect(tool.functionCalls).toEqual([{ name: "get_weather", args: { location: "Paris" } }]);
  });
});
