import { describe, expect, test } from "bun:test";
import { rewriteModelIds } from "../../src/translation/rewrite-model-id";
import { PassthroughFramer } from "../../src/pipeline/passthrough-framer";
import { REPLAY_SEEDS, splitAtRandom } from "../support/split-chunks";

describe("rewriteModelIds", () => {
  test("replaces every model value and leaves every other byte alone", () => {
    const upstream = '{"id":"x", "model" : "gpt-4o-mini-2024-07-18","choices":[],"nested":{"model":"a"}}';
    expect(rewriteModelIds(upstream, "openai/gpt-4o-mini")).toBe(
      '{"id":"x", "model" : "openai/gpt-4o-mini","choices":[],"nested":{"model":"openai/gpt-4o-mini"}}',
    );
  });

  test("does not touch an escaped model key inside a string value", () => {
    const text = '{"arguments":"{\\"model\\":\\"keep-me\\"}","model":"up"}';
    expect(rewriteModelIds(text, "mine")).toBe('{"arguments":"{\\"model\\":\\"keep-me\\"}","model":"mine"}');
  });

  test("returns text without a model key unchanged", () => {
    expect(rewriteModelIds('data: {"candidates":[]}\n\n', "x")).toBe('data: {"candidates":[]}\n\n');
  });
});

const CHAT_STREAM =
  'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\n' +
  "data: [DONE]\n\n";

function relay(framer: PassthroughFramer, pieces: string[]): string {
  return pieces.map((piece) => framer.take(piece)).join("") + framer.flush();
}

describe("PassthroughFramer", () => {
  test("forwards whole frames only, with the requested model id, whatever the chunking", () => {
    const expected = CHAT_STREAM.replaceAll("gpt-4o-mini-2024-07-18", "openai/gpt-4o-mini");
    for (const seed of REPLAY_SEEDS) {
      const framer = new PassthroughFramer("openai-chat", "openai/gpt-4o-mini", true);
      expect(relay(framer, splitAtRandom(CHAT_STREAM, seed))).toBe(expected);
    }
  });

  test("holds a usage frame written with whitespace (\"usage\": {) so the charge can go into it", () => {
    const spaced = CHAT_STREAM.replace('"usage":{', '"usage": {');
    for (const seed of REPLAY_SEEDS) {
      const framer = new PassthroughFramer("openai-chat", "m", true);
      const pieces = splitAtRandom(spaced, seed);
      const sent = pieces.map((piece) => framer.take(piece)).join("");
      expect(sent).not.toContain('"usage"');
      const held = framer.flush();
      expect(held.startsWith('data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage": {')).toBe(true);
      expect(sent + held).toBe(spaced.replaceAll("gpt-4o-mini-2024-07-18", "m"));
    }
  });

  test("drops the usage-only chunk the gateway asked for when the client did not", () => {
    const framer = new PassthroughFramer("openai-chat", "m", false);
    const out = relay(framer, splitAtRandom(CHAT_STREAM, 42));
    expect(out).not.toContain('"usage"');
    expect(out).toContain('"finish_reason":"stop"');
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("handles CRLF frame boundaries (Google)", () => {
    const google = 'data: {"candidates":[{"content":{"parts":[{"text":"a"}]}}]}\r\n\r\ndata: {"candidates":[{"finishReason":"STOP"}]}\r\n\r\n';
    const framer = new PassthroughFramer("google-generate-content", "g", false);
    const first = framer.take(google.slice(0, 40));
    expect(first).toBe("");
    expect(first + framer.take(google.slice(40)) + framer.flush()).toBe(google);
  });

  test("cuts at a blank line split between chunks anywhere, one character at a time included", () => {
    const google = 'data: {"candidates":[{"content":{"parts":[{"text":"a"}]}}]}\r\n\r\ndata: {"candidates":[{"finishReason":"STOP"}]}\r\n\r\n';
    const firstFrame = google.indexOf("\r\n\r\n") + 4;
    for (let at = 1; at < google.length; at++) {
      const framer = new PassthroughFramer("google-generate-content", "g", false);
      const out = [framer.take(google.slice(0, at)), framer.take(google.slice(at))];
      // Each write is whole frames: the first frame goes out as soon as its blank line is complete.
      expect(out[0]).toBe(at >= firstFrame ? google.slice(0, at >= google.length ? google.length : firstFrame) : "");
      expect(out.join("") + framer.flush()).toBe(google);
    }
    const framer = new PassthroughFramer("google-generate-content", "g", false);
    const written = [...google].map((character) => framer.take(character));
    expect(written.filter((piece) => piece !== "")).toEqual([google.slice(0, firstFrame), google.slice(firstFrame)]);
  });
});
