import { describe, expect, test } from "bun:test";
import type { ProtocolId } from "../../../src/ir";
import { jsonResponse } from "../../../src/pipeline/respond-json";
import { codecFor } from "../../../src/translation/codec-registry";
import { readFixture } from "./replay-sse";
import { loadRecordings } from "../../replay/recording";

const BODY = '{"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}';
const COSTED = '{"id":"chatcmpl-1","choices":[],"usage":{"cost":0.001234,"cost_micro_usd":1234,"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}';

describe("usage on the wire is the codec's to place: the charge, and usage the client did not ask for", () => {
  test("the openai-chat codec puts cost and cost_micro_usd first in usage and keeps every other byte", () => {
    expect(codecFor("openai-chat").addCharge?.(BODY, 1234)).toBe(COSTED);
  });

  test("an empty usage object gets the charge without a trailing comma", () => {
    expect(codecFor("openai-chat").addCharge?.('data: {"usage":{}}\n\n', 7)).toBe('data: {"usage":{"cost":0.000007,"cost_micro_usd":7}}\n\n');
  });

  test("OpenAI's own pretty-printed body (\"usage\": {) gets the charge, every other byte as it was", () => {
    const body = readFixture("openai-chat", "response-openai-text.json");
    expect(body).toContain('"usage": {\n');
    const costed = codecFor("openai-chat").addCharge?.(body, 1234) ?? "";
    expect(costed.replace('"cost":0.001234,"cost_micro_usd":1234,', "")).toBe(body);
    expect(JSON.parse(costed).usage).toMatchObject({ cost: 0.001234, cost_micro_usd: 1234, prompt_tokens: 16, completion_tokens: 363 });
  });

  test("whitespace anywhere JSON allows it around the colon, and an empty object with space inside", () => {
    const addCharge = codecFor("openai-chat").addCharge!;
    expect(addCharge('{"usage" \r\n:\t{ "prompt_tokens":3}}', 7)).toBe('{"usage" \r\n:\t{"cost":0.000007,"cost_micro_usd":7, "prompt_tokens":3}}');
    expect(addCharge('{"usage": { }}', 7)).toBe('{"usage": {"cost":0.000007,"cost_micro_usd":7 }}');
  });

  test("the charge goes into the last usage object: a later usage null or a usage key quoted inside a string is not one", () => {
    const addCharge = codecFor("openai-chat").addCharge!;
    const frames = 'data: {"choices":[],"usage":{"prompt_tokens":3}}\n\ndata: {"choices":[{"delta":{"content":"say \\"usage\\": {}"}}],"usage": null}\n\n';
    expect(addCharge(frames, 7)).toBe(frames.replace('"usage":{', '"usage":{"cost":0.000007,"cost_micro_usd":7,'));
    expect(codecFor("openai-chat").usageFrameAt?.(frames)).toBe(0);
    expect(codecFor("openai-chat").usageFrameAt?.(frames.slice(frames.indexOf("\n\n") + 2))).toBe(-1);
  });

  test("the charge goes into the answer's own usage, not a usage nested after it (Groq's usage_breakdown) or inside it (x_groq)", () => {
    const addCharge = codecFor("openai-chat").addCharge!;
    const body = '{"choices":[],"usage":{"prompt_tokens":9},"usage_breakdown":{"models":[{"model":"a","usage":{"prompt_tokens":4}},{"model":"b","usage":{"prompt_tokens":5}}]},"x_groq":{"id":"req_1"}}';
    expect(addCharge(body, 7)).toBe(body.replace('"usage":{"prompt_tokens":9', '"usage":{"cost":0.000007,"cost_micro_usd":7,"prompt_tokens":9'));
    // A stream's last chunk: x_groq.usage first, the answer's usage after it, then [DONE]; a brace inside a string changes nothing.
    const frames = 'data: {"choices":[{"delta":{"content":"} {"}}],"x_groq":{"usage":{"prompt_tokens":9}},"usage":{"prompt_tokens":9}}\n\ndata: [DONE]\n\n';
    expect(addCharge(frames, 7)).toBe(frames.replace('"usage":{"prompt_tokens":9}}\n', '"usage":{"cost":0.000007,"cost_micro_usd":7,"prompt_tokens":9}}\n'));
    // Only a nested usage: no place for the charge.
    expect(addCharge('{"x_groq":{"usage":{"prompt_tokens":9}},"usage":null}', 7)).toBe('{"x_groq":{"usage":{"prompt_tokens":9}},"usage":null}');
  });

  test("an unknown charge adds nothing", () => {
    expect(codecFor("openai-chat").addCharge?.(BODY, null)).toBe(BODY);
  });

  test("the charge's splice and fields, put together, are addCharge: for a body a worker turned into bytes", () => {
    const codec = codecFor("openai-chat");
    const bodies = [BODY, '{"usage":{}}', '{"usage" \r\n:\t{ "prompt_tokens":3}}', '{"usage": { }}', '{"x_groq":{"usage":{"prompt_tokens":9}},"usage":{"prompt_tokens":9},"z":"é"}'];
    for (const body of bodies) {
      const splice = codec.chargeSplice!(body)!;
      expect(body.slice(0, splice.at) + codec.chargeFields!(1234) + splice.separator + body.slice(splice.at)).toBe(codec.addCharge!(body, 1234));
    }
    expect(codec.chargeSplice!('{"x_groq":{"usage":{"prompt_tokens":9}},"usage":null}')).toBeUndefined();
    expect(codec.chargeSplice!('{"choices":[]}')).toBeUndefined();
  });

  test("no other protocol has a place for the charge, nor asks for usage on the client's behalf", () => {
    const others: ProtocolId[] = ["openai-responses", "anthropic-messages", "google-generate-content"];
    expect(others.filter((protocol) => codecFor(protocol).addCharge !== undefined)).toEqual([]);
    expect(others.filter((protocol) => codecFor(protocol).chargeSplice !== undefined || codecFor(protocol).chargeFields !== undefined)).toEqual([]);
    expect(others.filter((protocol) => codecFor(protocol).usageFrameAt !== undefined)).toEqual([]);
    expect(others.filter((protocol) => codecFor(protocol).dropUnrequestedUsage !== undefined)).toEqual([]);
  });

  test("the openai-chat codec drops the usage-only chunk it asked for, and only that chunk", () => {
    const content = 'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n';
    const finish = 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3}}\n\n';
    const usageOnly = 'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n';
    expect(codecFor("openai-chat").dropUnrequestedUsage?.(content + finish + usageOnly + "data: [DONE]\n\n")).toBe(content + finish + "data: [DONE]\n\n");
  });

  test("the usage-only chunk is dropped wherever it sits: CRLF frames, first or last in the text, twice; a choices-less frame without usage stays", () => {
    const drop = codecFor("openai-chat").dropUnrequestedUsage!;
    const usageOnly = 'data: {"choices":[],"usage":{"prompt_tokens":3}}';
    const content = 'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}';
    const noUsage = 'data: {"id":"x","choices":[]}';
    expect(drop(`${usageOnly}\r\n\r\n${content}\r\n\r\ndata: [DONE]\r\n\r\n`)).toBe(`${content}\r\n\r\ndata: [DONE]\r\n\r\n`);
    expect(drop(`${content}\r\n\r\n${usageOnly}\r\n\r\n`)).toBe(`${content}\r\n\r\n`);
    expect(drop(`${usageOnly}\n\n${content}\n\n${usageOnly}\n\n`)).toBe(`${content}\n\n`);
    expect(drop(`${noUsage}\n\n${usageOnly}\n\n`)).toBe(`${noUsage}\n\n`);
    // A partial frame at the end (no blank line yet) is a frame like any other.
    expect(drop(`${content}\n\n${usageOnly}`)).toBe(`${content}\n\n`);
    const untouched = `${content}\n\n`;
    expect(drop(untouched)).toBe(untouched);
    // Only a key that is `choices` itself: one that ends so (an extension's) is not the empty choices list.
    const otherKey = 'data: {"choices":[{"index":0,"delta":{}}],"x_choices":[],"usage":{"prompt_tokens":3}}';
    expect(drop(`${otherKey}\n\n${usageOnly}\n\n`)).toBe(`${otherKey}\n\n`);
  });

  test("on every recorded real chat stream that carries a usage-only chunk, exactly those frames go, LF as recorded and CRLF as Gemini frames its streams", () => {
    const drop = codecFor("openai-chat").dropUnrequestedUsage!;
    const streams = loadRecordings().filter((recording) => recording.protocol === "openai-chat" && recording.mode === "stream" && recording.bytes.includes('"choices":[]'));
    expect(streams.length).toBeGreaterThan(0);
    for (const recording of streams) {
      for (const blank of ["\n\n", "\r\n\r\n"]) {
        const frames = recording.bytes.replaceAll("\r\n", "\n").split("\n\n").filter((frame) => frame.length > 0);
        const usageOnly = (frame: string) => frame.includes('"choices":[]') && frame.includes('"usage"');
        const kept = frames.filter((frame) => !usageOnly(frame));
        expect(kept.length).toBeLessThan(frames.length);
        // Relayed as the upstream cut it: one frame per chunk, and the whole stream at once.
        expect(frames.map((frame) => drop(frame + blank)).join("")).toBe(kept.map((frame) => frame + blank).join(""));
        expect(drop(frames.map((frame) => frame + blank).join(""))).toBe(kept.map((frame) => frame + blank).join(""));
      }
    }
  });

  test("a whole answer's 200 carries the charge through the client protocol's codec, and only there", async () => {
    expect(await jsonResponse("openai-chat", BODY, 1234, {}).text()).toBe(COSTED);
    expect(await jsonResponse("anthropic-messages", BODY, 1234, {}).text()).toBe(BODY);
    expect(await jsonResponse("openai-chat", BODY, undefined, {}).text()).toBe(BODY);
  });
});
