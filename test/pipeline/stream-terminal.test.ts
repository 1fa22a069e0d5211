import { expect, test } from "bun:test";
import { terminalFrameAt } from "../../src/pipeline/stream-terminal";

test("each protocol's terminal frame is found where its frame starts", () => {
  const chat = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';
  expect(terminalFrameAt("openai-chat", chat)).toBe(chat.indexOf("data: [DONE]"));
  expect(terminalFrameAt("openai-chat", "data:[DONE]\n\n")).toBe(0);
  const messages = 'event: message_delta\ndata: {"type":"message_delta"}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
  expect(terminalFrameAt("anthropic-messages", messages)).toBe(messages.indexOf("event: message_stop"));
  expect(terminalFrameAt("anthropic-messages", 'data: {"type":"message_stop"}\n\n')).toBe(0);
  for (const type of ["response.completed", "response.incomplete", "response.failed"]) {
    const responses = `event: response.output_text.done\ndata: {"type":"response.output_text.done"}\n\nevent: ${type}\ndata: {"type":"${type}"}\n\n`;
    expect(terminalFrameAt("openai-responses", responses)).toBe(responses.indexOf(`event: ${type}`));
  }
});

test("text that only mentions a terminal frame is not one, and Gemini has none", () => {
  expect(terminalFrameAt("openai-chat", 'data: {"choices":[{"delta":{"content":"data: [DONE]"}}]}\n\n')).toBe(-1);
  expect(terminalFrameAt("anthropic-messages", 'data: {"type":"content_block_delta","delta":{"text":"message_stop"}}\n\n')).toBe(-1);
  expect(terminalFrameAt("openai-responses", 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"response.completed"}\n\n')).toBe(-1);
  expect(terminalFrameAt("openai-responses", "event: response.completed_extra\n\n")).toBe(-1);
  expect(terminalFrameAt("google-generate-content", 'data: {"candidates":[{"finishReason":"STOP"}]}\n\n')).toBe(-1);
});

test("in every recorded stream of real traffic with a terminal frame, it is found at the start of the stream's last frame", async () => {
  const { readdirSync, readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const root = join(import.meta.dir, "../replay/recordings");
  let checked = 0;
  for (const vendor of readdirSync(root)) {
    for (const file of readdirSync(join(root, vendor)).filter((name) => name.endsWith(".meta.json"))) {
      const meta = JSON.parse(readFileSync(join(root, vendor, file), "utf8")) as { protocol: "openai-chat" | "openai-responses" | "anthropic-messages" | "google-generate-content"; mode: string; body: string };
      if (meta.mode !== "stream" || meta.protocol === "google-generate-content") continue;
      const text = readFileSync(join(root, vendor, meta.body), "utf8");
      const at = terminalFrameAt(meta.protocol, text);
      // A stream that failed midway (an error event) may have no terminal frame; one that has one has it once.
      if (at === -1) continue;
      checked++;
      // What the relay holds back is that one frame: nothing of the answer is delayed with it.
      expect(text.slice(at).split(/\r?\n\r?\n/).filter((frame) => frame.trim() !== "")).toHaveLength(1);
    }
  }
  expect(checked).toBeGreaterThan(30);
});
