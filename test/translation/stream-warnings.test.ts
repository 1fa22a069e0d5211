/**
 * A stream translation hands each encoder warning out once, with the output of the call
 * that raised it; outputs that drop nothing carry no `warnings` field at all, so the worker
 * boundary moves nothing more for them.
 */
import { expect, test } from "bun:test";
import { StreamTranslation } from "../../src/translation/stream-translation";
import type { StreamOpenOptions, StreamOutput } from "../../src/translation/translation-types";

const CONTEXT = { requestId: "req_stream_warn", model: "vendor/model", created: 1747150000 };

/** An OpenAI chat upstream that reasons (DeepSeek's `reasoning_content`), then answers. */
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const UPSTREAM = [
  chunk({ role: "assistant", reasoning_content: "Let me " }),
  chunk({ reasoning_content: "think." }),
  chunk({ content: "Answer." }),
  chunk({ content: " More." }),
  chunk({}, "stop") + "data: [DONE]\n\n",
];

function options(client: StreamOpenOptions["client"], passthrough = false): StreamOpenOptions {
  return { sessionId: "s1", upstream: "openai-chat", client, context: CONTEXT, clientAskedUsage: false, passthrough };
}

function run(translation: StreamTranslation): StreamOutput[] {
  return [...UPSTREAM.map((text) => translation.push(text)), translation.end()];
}

test("an Anthropic client's stream reports the unsigned reasoning it drops, once, on the chunk that dropped it", () => {
  const outputs = run(new StreamTranslation(options("anthropic-messages")));
  expect(outputs.map((output) => "warnings" in output)).toEqual([false, false, true, false, false, false]);
  expect(outputs[2]!.warnings).toEqual([expect.objectContaining({ code: "dropped_content", field: "output.reasoning" })]);
  expect(outputs.map((output) => output.out).join("")).not.toContain("thinking");
});

test("reasoning still held when the stream fails is reported with the output of the failure", () => {
  const translation = new StreamTranslation(options("anthropic-messages"));
  expect("warnings" in translation.push(UPSTREAM[0]!)).toBe(false);
  const failed = translation.fail({ kind: "upstream_bad_gateway", status: 502, message: "cut" });
  expect(failed.warnings).toEqual([expect.objectContaining({ field: "output.reasoning" })]);
});

test("a client protocol that carries the reasoning, and a passthrough, report nothing", () => {
  for (const translation of [new StreamTranslation(options("openai-responses")), new StreamTranslation(options("openai-chat", true))]) {
    for (const output of run(translation)) expect("warnings" in output).toBe(false);
  }
});
