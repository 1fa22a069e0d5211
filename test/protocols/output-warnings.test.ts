/**
 * Response and stream encoders never drop silently: whatever the client's protocol cannot
 * carry of an answer comes back as a warning (README "Never drop silently"), and an answer
 * it carries whole raises none.
 */
import { describe, expect, test } from "bun:test";
import type { CodecContext, IrContentPart, IrStreamPart, IrWarning, ProtocolId } from "../../src/ir";
import { codecFor } from "../../src/translation/codec-registry";

const PROTOCOLS: readonly ProtocolId[] = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"];

function context(): CodecContext {
  let counter = 0;
  return { requestId: "req_warn", model: "vendor/model", created: 1747150000, newId: (prefix) => `${prefix}_${counter++}` };
}

const fields = (warnings: readonly IrWarning[]) => warnings.map((warning) => `${warning.code}:${warning.field}`).sort();

const UNSIGNED_REASONING: IrContentPart = { type: "reasoning", text: "Let me think." };
const REDACTED_REASONING: IrContentPart = { type: "reasoning", text: "", redactedData: "EmwKAhgB", signatureProtocol: "anthropic-messages" };
const INLINE_IMAGE: IrContentPart = { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" };
const LINKED_FILE: IrContentPart = { type: "file", mediaType: "application/pdf", url: "https://example.com/a.pdf" };
const BROKEN_CALL: IrContentPart = { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"location": "Par' };

/** Per client protocol: the warnings each lossy part raises in a whole answer (none: carried). */
const JSON_EXPECTED: Record<ProtocolId, Record<string, string[]>> = {
  "anthropic-messages": {
    unsigned: ["dropped_content:output.reasoning"],
    redacted: [],
    image: ["dropped_content:output.image"],
    file: ["dropped_content:output.file"],
    brokenCall: ["invalid_tool_arguments:output.tool_calls"],
  },
  "openai-chat": {
    unsigned: [],
    redacted: ["dropped_content:output.redacted_reasoning"],
    image: ["dropped_content:output.image"],
    file: ["dropped_content:output.file"],
    brokenCall: [],
  },
  "openai-responses": {
    unsigned: [],
    redacted: ["dropped_content:output.redacted_reasoning"],
    image: ["dropped_content:output.image"],
    file: ["dropped_content:output.file"],
    brokenCall: [],
  },
  "google-generate-content": {
    unsigned: [],
    redacted: ["dropped_content:output.redacted_reasoning"],
    image: [],
    file: ["dropped_content:output.file"],
    brokenCall: ["invalid_tool_arguments:output.tool_calls"],
  },
};

const PARTS: Record<string, IrContentPart> = {
  unsigned: UNSIGNED_REASONING,
  redacted: REDACTED_REASONING,
  image: INLINE_IMAGE,
  file: LINKED_FILE,
  brokenCall: BROKEN_CALL,
};

describe("response encoders return what the client's protocol cannot carry", () => {
  for (const client of PROTOCOLS) {
    for (const [name, part] of Object.entries(PARTS)) {
      test(`${client}: ${name}`, () => {
        const encoded = codecFor(client).encodeResponse({ content: [{ type: "text", text: "Answer." }, part], finish: { reason: "stop" } }, context());
        expect(fields(encoded.warnings)).toEqual(JSON_EXPECTED[client][name]!);
        for (const warning of encoded.warnings) expect(warning.message.length).toBeGreaterThan(0);
      });
    }

    test(`${client}: an answer carried whole raises no warning, and one kind of loss is reported once`, () => {
      const plain = codecFor(client).encodeResponse(
        { content: [{ type: "text", text: "Answer." }, { type: "tool_call", id: "call_1", name: "f", arguments: '{"a":1}' }], finish: { reason: "tool_calls" } },
        context(),
      );
      expect(plain.warnings).toEqual([]);
      const twice = codecFor(client).encodeResponse({ content: [LINKED_FILE, { type: "text", text: "x" }, LINKED_FILE], finish: { reason: "stop" } }, context());
      expect(twice.warnings).toHaveLength(1);
    });
  }
});

/** Runs parts through a client's stream encoder; returns the text and the warnings, with the call that raised each. */
function encodeStream(client: ProtocolId, parts: IrStreamPart[]) {
  const encoder = codecFor(client).createStreamEncoder(context(), { includeUsage: true });
  let text = "";
  const raisedAt: string[] = [];
  let seen = 0;
  const note = (label: string) => {
    for (; seen < encoder.warnings.length; seen++) raisedAt.push(`${label}:${encoder.warnings[seen]!.field}`);
  };
  parts.forEach((part, index) => {
    text += encoder.push(part);
    note(`${index}:${part.type}`);
  });
  text += encoder.end();
  note("end");
  return { text, warnings: encoder.warnings, raisedAt };
}

const THINK_THEN_ANSWER: IrStreamPart[] = [
  { type: "start" },
  { type: "reasoning_delta", text: "Let me " },
  { type: "reasoning_delta", text: "think." },
  { type: "text_delta", text: "Answer." },
  { type: "finish", finish: { reason: "stop" } },
];

describe("stream encoders report what the client's protocol cannot carry, on the call that drops it", () => {
  test("anthropic-messages: unsigned thinking is dropped when the next block starts, with one warning", () => {
    const { text, raisedAt } = encodeStream("anthropic-messages", [...THINK_THEN_ANSWER.slice(0, 4), { type: "reasoning_delta", text: "More." }, { type: "text_delta", text: "!" }, { type: "finish", finish: { reason: "stop" } }]);
    expect(text).not.toContain("thinking");
    expect(raisedAt).toEqual(["3:text_delta:output.reasoning"]);
  });

  test("anthropic-messages: thinking still unsigned when the stream ends, or signed by another vendor, is reported", () => {
    expect(encodeStream("anthropic-messages", THINK_THEN_ANSWER.slice(0, 3)).raisedAt).toEqual(["end:output.reasoning"]);
    const foreign = encodeStream("anthropic-messages", [...THINK_THEN_ANSWER.slice(0, 3), { type: "reasoning_signature", signature: "sig", protocol: "google-generate-content" }]);
    expect(foreign.raisedAt).toEqual(["3:reasoning_signature:output.reasoning"]);
  });

  test("anthropic-messages: thinking held when the stream fails is reported with the error frame", () => {
    const failed = encodeStream("anthropic-messages", [...THINK_THEN_ANSWER.slice(0, 2), { type: "error", error: { kind: "upstream_bad_gateway", status: 502, message: "cut" } }]);
    expect(failed.raisedAt).toEqual(["2:error:output.reasoning"]);
  });

  test("anthropic-messages: Anthropic-signed thinking and redacted thinking go out without a warning", () => {
    const signed = encodeStream("anthropic-messages", [
      ...THINK_THEN_ANSWER.slice(0, 3),
      { type: "reasoning_signature", signature: "sig", protocol: "anthropic-messages" },
      { type: "redacted_reasoning", data: "EmwKAhgB", protocol: "anthropic-messages" },
      ...THINK_THEN_ANSWER.slice(3),
    ]);
    expect(signed.text).toContain('"signature":"sig"');
    expect(signed.text).toContain("redacted_thinking");
    expect(signed.warnings).toEqual([]);
  });

  for (const client of ["openai-chat", "openai-responses", "google-generate-content"] as const) {
    test(`${client}: Anthropic's redacted thinking has no form and is reported`, () => {
      const { raisedAt } = encodeStream(client, [{ type: "start" }, { type: "redacted_reasoning", data: "EmwKAhgB", protocol: "anthropic-messages" }, ...THINK_THEN_ANSWER.slice(3)]);
      expect(raisedAt).toEqual(["1:redacted_reasoning:output.redacted_reasoning"]);
    });
  }

  test("openai-chat: output after the finish chunk is reported, not sent", () => {
    const { text, raisedAt } = encodeStream("openai-chat", [...THINK_THEN_ANSWER, { type: "text_delta", text: "late" }, { type: "text_delta", text: "later" }]);
    expect(text).not.toContain("late");
    expect(raisedAt).toEqual(["5:text_delta:output.after_finish"]);
  });

  test("google-generate-content: tool arguments that are not a JSON object are sent as {} and reported", () => {
    const { text, raisedAt } = encodeStream("google-generate-content", [
      { type: "start" },
      { type: "tool_call_start", index: 0, id: "call_1", name: "get_weather" },
      { type: "tool_call_delta", index: 0, argumentsDelta: '{"location": "Par' },
      { type: "tool_call_end", index: 0 },
      { type: "finish", finish: { reason: "tool_calls" } },
    ]);
    expect(text).toContain('"functionCall":{"name":"get_weather","args":{}}');
    expect(raisedAt).toEqual(["3:tool_call_end:output.tool_calls"]);
  });

  for (const client of PROTOCOLS) {
    test(`${client}: a stream carried whole raises no warning`, () => {
      const whole: IrStreamPart[] = [
        { type: "start" },
        { type: "text_delta", text: "Answer." },
        { type: "tool_call_start", index: 0, id: "call_1", name: "f" },
        { type: "tool_call_delta", index: 0, argumentsDelta: '{"a":1}' },
        { type: "tool_call_end", index: 0 },
        { type: "usage", usage: { promptTokens: 3, completionTokens: 2 } },
        { type: "finish", finish: { reason: "tool_calls" } },
      ];
      expect(encodeStream(client, whole).warnings).toEqual([]);
    });
  }
});
