import { describe, expect, test } from "bun:test";
import { IrDecodeError } from "../../../src/ir";
import { anthropicMessagesCodec as codec } from "../../../src/protocols/anthropic-messages";
import { readJsonFixture } from "./stream-replay";

const minimal = { model: "anthropic/claude-sonnet-4.5", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] };

function decodeError(body: unknown): string {
  try {
    codec.decodeRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(IrDecodeError);
    return (error as Error).message;
  }
  throw new Error("expected an IrDecodeError");
}

describe("anthropic-messages decodeRequest validation", () => {
  test("a body that is not an object is rejected", () => {
    expect(decodeError([1, 2])).toBe("request body must be a JSON object");
  });

  test("a missing model is rejected", () => {
    expect(decodeError({ messages: [] })).toBe("model is required and must be a string");
  });

  test("messages that are not an array are rejected", () => {
    expect(decodeError({ model: "m", messages: "hi" })).toBe("messages must be an array");
  });

  test("an unknown role is rejected with its position", () => {
    expect(decodeError({ model: "m", messages: [{ role: "tool", content: "x" }] })).toBe(
      'messages[0].role must be "user", "assistant" or "system"',
    );
  });

  test("wrongly typed parameters are rejected by name", () => {
    expect(decodeError({ ...minimal, temperature: "hot" })).toBe("temperature must be a number");
    expect(decodeError({ ...minimal, max_tokens: 1.5 })).toBe("max_tokens must be an integer");
    expect(decodeError({ ...minimal, stop_sequences: [1] })).toBe("stop_sequences must be an array of strings");
    expect(decodeError({ ...minimal, stream: "yes" })).toBe("stream must be a boolean");
    expect(decodeError({ ...minimal, tool_choice: { type: "sometimes" } })).toContain("tool_choice.type");
  });

  test("models must be an array of at most 8 strings", () => {
    expect(decodeError({ ...minimal, models: "a" })).toBe("models must be an array of strings");
    expect(decodeError({ ...minimal, models: Array.from({ length: 9 }, (_, i) => `m${i}`) })).toBe("models must list at most 8 model ids");
  });

  test("a malformed known block is rejected, naming its path", () => {
    expect(decodeError({ model: "m", messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] })).toBe(
      "messages[0].content[0].text must be a string",
    );
  });
});

describe("anthropic-messages decodeRequest mapping", () => {
  const { value: ir, warnings } = codec.decodeRequest(readJsonFixture("request-agent-turn.json"));

  test("system text blocks are joined with a newline and the last cache_control is kept", () => {
    expect(ir.system).toBe("You are a careful travel assistant.\nAlways state units.");
    expect(ir.systemCacheControl).toEqual({ type: "ephemeral" });
  });

  test("model, fallback models, stream and sampling params are carried", () => {
    expect(ir.model).toBe("anthropic/claude-sonnet-4.5");
    expect(ir.models).toEqual(["openai/gpt-5", "google/gemini-2.5-pro"]);
    expect(ir.stream).toBe(true);
    expect(ir.params).toEqual({ maxTokens: 16000, temperature: 1, topK: 40, stop: ["\n\nHuman:"], thinkingBudgetTokens: 8000 });
  });

  test("user content keeps text, base64 images and PDF documents", () => {
    expect(ir.messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What's the weather and time in Paris? Here is my itinerary." },
        { type: "image", mediaType: "image/jpeg", data: "/9j/4AAQSkZJRgABAQAAAQABAAD" },
        { type: "file", mediaType: "application/pdf", data: "JVBERi0xLjQK", filename: "itinerary.pdf" },
      ],
    });
  });

  test("signed thinking, redacted thinking and tool_use become reasoning and tool calls", () => {
    expect(ir.messages[1]?.content).toEqual([
      { type: "reasoning", text: "Two independent lookups.", signature: "EqQBCkYIBxgCKkBd7pX0mHnq3vG2FzWk", signatureProtocol: "anthropic-messages" },
      { type: "reasoning", text: "", redactedData: "EmwKAhgBEgy3va3pzix/LafPsn4a", signatureProtocol: "anthropic-messages" },
      { type: "text", text: "Checking both." },
      { type: "tool_call", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", arguments: '{"location":"Paris, France","unit":"celsius"}' },
      { type: "tool_call", id: "toolu_01VbJ2p8sQnLk4TmZyX7cR3d", name: "get_time", arguments: '{"timezone":"Europe/Paris"}' },
    ]);
  });

  test("tool_result blocks are split out into tool messages that name their tool", () => {
    expect(ir.messages.slice(2, 5)).toEqual([
      { role: "tool", content: [{ type: "tool_result", callId: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", toolName: "get_weather", output: "18°C, light rain" }] },
      {
        role: "tool",
        content: [
          {
            type: "tool_result",
            callId: "toolu_01VbJ2p8sQnLk4TmZyX7cR3d",
            toolName: "get_time",
            output: [{ type: "text", text: "timezone service unreachable" }],
            isError: true,
          },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Also, keep it short." }] },
    ]);
  });

  test("a mid-conversation system message is kept in place", () => {
    expect(ir.messages[5]).toEqual({ role: "system", content: [{ type: "text", text: "The user prefers metric units." }] });
  });

  test("client tools map to IR tools and server tools ride in extras with the other unmapped fields", () => {
    expect(ir.tools?.map((tool) => tool.name)).toEqual(["get_weather", "get_time"]);
    expect(ir.tools?.[0]?.parameters).toMatchObject({ type: "object", required: ["location"] });
    expect(ir.extras).toEqual({
      protocol: "anthropic-messages",
      fields: {
        tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }],
        metadata: { user_id: "user_7d3f" },
        service_tier: "auto",
      },
    });
  });

  test("disable_parallel_tool_use is the inverse of parallelToolCalls", () => {
    expect(ir.toolChoice).toEqual({ type: "auto" });
    expect(ir.parallelToolCalls).toBe(false);
  });

  test("a clean request decodes without warnings", () => {
    expect(warnings).toEqual([]);
  });

  test("tool_choice any, tool and none map to required, a named tool and none", () => {
    const decode = (tool_choice: unknown) => codec.decodeRequest({ ...minimal, tool_choice }).value;
    expect(decode({ type: "any" }).toolChoice).toEqual({ type: "required" });
    expect(decode({ type: "tool", name: "get_time" }).toolChoice).toEqual({ type: "tool", name: "get_time" });
    expect(decode({ type: "none" }).toolChoice).toEqual({ type: "none" });
    expect(decode({ type: "auto", disable_parallel_tool_use: false }).parallelToolCalls).toBe(true);
  });

  test("output_config format and effort map to responseFormat and reasoningEffort; legacy output_format is accepted", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const current = codec.decodeRequest({ ...minimal, output_config: { format: { type: "json_schema", schema }, effort: "high" } }).value;
    expect(current.responseFormat).toEqual({ type: "json_schema", name: "response", schema });
    expect(current.params.reasoningEffort).toBe("high");
    const legacy = codec.decodeRequest({ ...minimal, output_format: { type: "json_schema", schema } }).value;
    expect(legacy.responseFormat).toEqual({ type: "json_schema", name: "response", schema });
  });

  test("unsigned thinking and unknown block types are skipped with warnings", () => {
    const { value, warnings: skipped } = codec.decodeRequest({
      model: "m",
      messages: [
        { role: "user", content: "Hi" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "no signature" },
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
            { type: "text", text: "Hello" },
          ],
        },
      ],
    });
    expect(value.messages[1]?.content).toEqual([{ type: "text", text: "Hello" }]);
    expect(skipped.map((warning) => warning.field)).toEqual(["messages[1].content[0]", "messages[1].content[1]"]);
    expect(skipped.every((warning) => warning.code === "dropped_content")).toBe(true);
  });

  test("url images, text documents and a plain string system prompt are decoded", () => {
    const { value } = codec.decodeRequest({
      model: "m",
      system: "Be brief.",
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "héllo" } },
          ],
        },
      ],
    });
    expect(value.system).toBe("Be brief.");
    expect(value.systemCacheControl).toBeUndefined();
    expect(value.messages[0]?.content).toEqual([
      { type: "image", url: "https://example.com/a.png" },
      { type: "file", mediaType: "text/plain", data: Buffer.from("héllo").toString("base64") },
    ]);
  });

  test("a text block's cache_control is kept on the IR text part", () => {
    const { value } = codec.decodeRequest({
      model: "m",
      messages: [{ role: "user", content: [{ type: "text", text: "long doc", cache_control: { type: "ephemeral", ttl: "1h" } }] }],
    });
    expect(value.messages[0]?.content[0]).toEqual({ type: "text", text: "long doc", cacheControl: { type: "ephemeral", ttl: "1h" } });
  });
});
