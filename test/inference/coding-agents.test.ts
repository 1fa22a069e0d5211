import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { DEFAULT_TOOL_NAME } from "../support/mock-upstreams";
import { startInferenceHarness, type InferenceHarness } from "../support/inference-harness";

/**
 * Coding agents through Switchyard by base URL alone, with the request shapes they send.
 * Claude Code: the Anthropic SDK's beta Messages API (`/v1/messages?beta=true`, beta
 * headers), a bearer token (ANTHROPIC_AUTH_TOKEN), system and tools with cache_control,
 * extended thinking, metadata, and token counting before a turn. Codex: the Responses API,
 * streamed, with store: false, encrypted reasoning asked for, a prompt cache key, and
 * function tools.
 */
const UPSTREAMS = {
  "openai-chat": "mock-openai/gpt-4o-mini",
  "openai-responses": "mock-responses/gpt-5-mini",
  "anthropic-messages": "mock-anthropic/claude-sonnet-4-5",
  "google-generate-content": "mock-google/gemini-2.5-flash",
} as const;

const SHELL_SCHEMA = { type: "object", properties: { command: { type: "array", items: { type: "string" } } }, required: ["command"] };

let harness: InferenceHarness;
beforeAll(async () => {
  harness = await startInferenceHarness();
});
afterAll(async () => {
  await harness.close();
});

describe("Claude Code (Anthropic SDK, beta Messages API, bearer token)", () => {
  const claudeCode = () =>
    new Anthropic({
      authToken: harness.account.apiKey,
      apiKey: null,
      baseURL: harness.server.url,
      maxRetries: 0,
      defaultHeaders: { "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14" },
    });

  const turn = (model: string) => ({
    model,
    max_tokens: 32_000,
    betas: ["claude-code-20250219"],
    metadata: { user_id: "user_abc_account_def_session_123" },
    system: [
      { type: "text" as const, text: "You are Claude Code, Anthropic's official CLI for Claude." },
      { type: "text" as const, text: "Work in the repository at /srv/app.", cache_control: { type: "ephemeral" as const } },
    ],
    tools: [{ name: DEFAULT_TOOL_NAME, description: "Run a shell command", input_schema: SHELL_SCHEMA as never, cache_control: { type: "ephemeral" as const } }],
    messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "List the files.", cache_control: { type: "ephemeral" as const } }] }],
  });

  for (const [upstream, model] of Object.entries(UPSTREAMS)) {
    test(`counts tokens, then streams a tool-use turn from ${upstream}`, async () => {
      const client = claudeCode();
      const { system, tools, messages } = turn(model);
      const counted = await client.beta.messages.countTokens({ model, system, tools, messages, betas: ["claude-code-20250219"] });
      expect(counted.input_tokens).toBeGreaterThan(0);

      const stream = client.beta.messages.stream({ ...turn(`${model}@tool_call`), temperature: 1 });
      const events: string[] = [];
      for await (const event of stream) events.push(event.type);
      const message = await stream.finalMessage();
      expect(events[0]).toBe("message_start");
      expect(events.at(-1)).toBe("message_stop");
      expect(message.stop_reason).toBe("tool_use");
      const toolUse = message.content.find((block) => block.type === "tool_use");
      expect(toolUse?.type === "tool_use" && toolUse.name).toBe(DEFAULT_TOOL_NAME);
      expect(message.usage.output_tokens).toBeGreaterThan(0);
    });
  }

  test("extended thinking round-trips its signature on the same protocol", async () => {
    const client = claudeCode();
    const model = `${UPSTREAMS["anthropic-messages"]}@reasoning`;
    const first = await client.beta.messages.stream({ ...turn(model), thinking: { type: "enabled", budget_tokens: 1_024 } }).finalMessage();
    const thinking = first.content.find((block) => block.type === "thinking");
    expect(thinking?.type === "thinking" && thinking.signature.length).toBeGreaterThan(0);
    // The next turn sends the thinking block back, signature included, as Claude Code does.
    const second = await client.beta.messages
      .stream({
        ...turn(UPSTREAMS["anthropic-messages"]),
        thinking: { type: "enabled", budget_tokens: 1_024 },
        messages: [...turn(model).messages, { role: "assistant", content: first.content as never }, { role: "user", content: "Go on." }],
      })
      .finalMessage();
    expect(second.stop_reason).toBe("end_turn");
    const sent = harness.mocks.anthropic.requests.at(-1)!.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(sent.messages[1]!.content)).toContain(thinking?.type === "thinking" ? thinking.signature : "missing");
  });
});

describe("Claude Code streaming extended thinking from every upstream (thinking only with an Anthropic signature)", () => {
  const claudeCode = () => new Anthropic({ authToken: harness.account.apiKey, apiKey: null, baseURL: harness.server.url, maxRetries: 0 });
  const request = (model: string) => ({
    model,
    max_tokens: 4_096,
    thinking: { type: "enabled" as const, budget_tokens: 1_024 },
    messages: [{ role: "user" as const, content: "Say hello." }],
  });

  /** The raw event order with block and delta types, consecutive repeats collapsed. */
  async function streamShape(model: string): Promise<{ shape: string[]; indexes: number[]; content: Anthropic.ContentBlock[] }> {
    const stream = claudeCode().messages.stream(request(model));
    const shape: string[] = [];
    const indexes: number[] = [];
    for await (const event of stream) {
      let name: string = event.type;
      if (event.type === "content_block_start") {
        name += `:${event.content_block.type}`;
        indexes.push(event.index);
      } else if (event.type === "content_block_delta") name += `:${event.delta.type}`;
      if (shape.at(-1) !== name) shape.push(name);
    }
    return { shape, indexes, content: (await stream.finalMessage()).content };
  }

  for (const upstream of ["openai-chat", "openai-responses", "google-generate-content"] as const) {
    test(`reasoning from ${upstream} opens no unsigned thinking block: exact event order, contiguous indexes`, async () => {
      const { shape, indexes, content } = await streamShape(`${UPSTREAMS[upstream]}@reasoning`);
      expect(shape).toEqual([
        "message_start",
        "content_block_start:text",
        "content_block_delta:text_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
      ]);
      expect(indexes).toEqual([0]);
      expect(content.map((block) => block.type)).toEqual(["text"]);
    });
  }

  test("an Anthropic upstream keeps its signed thinking block ahead of the text", async () => {
    const { shape, indexes, content } = await streamShape(`${UPSTREAMS["anthropic-messages"]}@reasoning`);
    expect(shape).toEqual([
      "message_start",
      "content_block_start:thinking",
      "content_block_delta:thinking_delta",
      "content_block_delta:signature_delta",
      "content_block_stop",
      "content_block_start:text",
      "content_block_delta:text_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(indexes).toEqual([0, 1]);
    const thinking = content[0];
    expect(thinking?.type === "thinking" && thinking.signature.length > 0 && thinking.thinking.length > 0).toBe(true);
  });
});

describe("Codex (OpenAI SDK, Responses API, streamed)", () => {
  const codex = () => new OpenAI({ apiKey: harness.account.apiKey, baseURL: `${harness.server.url}/v1`, maxRetries: 0 });

  for (const [upstream, model] of Object.entries(UPSTREAMS)) {
    test(`streams a function-call turn from ${upstream}`, async () => {
      const stream = await codex().responses.create({
        model: `${model}@tool_call`,
        instructions: "You are Codex, a coding agent.",
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "List the files." }] }],
        tools: [{ type: "function", name: DEFAULT_TOOL_NAME, description: "Run a shell command", parameters: SHELL_SCHEMA, strict: false }],
        tool_choice: "auto",
        parallel_tool_calls: false,
        reasoning: { effort: "medium", summary: "auto" },
        store: false,
        include: ["reasoning.encrypted_content"],
        prompt_cache_key: "session-123",
        stream: true,
      });
      const types: string[] = [];
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.completed") completed = event.response;
      }
      expect(types[0]).toBe("response.created");
      expect(types.at(-1)).toBe("response.completed");
      const call = completed?.output.find((item) => item.type === "function_call");
      expect(call?.type === "function_call" && call.name).toBe(DEFAULT_TOOL_NAME);
      expect(call?.type === "function_call" && JSON.parse(call.arguments)).toBeDefined();
      expect(completed?.usage?.output_tokens).toBeGreaterThan(0);
    });
  }
});
