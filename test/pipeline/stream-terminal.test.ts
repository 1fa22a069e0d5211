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
