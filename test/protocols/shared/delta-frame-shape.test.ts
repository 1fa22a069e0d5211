import { describe, expect, spyOn, test } from "bun:test";
import { DeltaFrameShape, KnownShapes } from "../../../src/protocols/shared/delta-frame-shape";
import { createChatStreamDecoder } from "../../../src/protocols/openai-chat/decode-stream";
import { createAnthropicStreamDecoder } from "../../../src/protocols/anthropic-messages/decode-stream";
import { createResponsesStreamDecoder } from "../../../src/protocols/openai-responses/decode-stream";
import { SseParser } from "../../../src/protocols/sse";
import type { IrStreamPart, ProtocolId, StreamDecoder } from "../../../src/ir";
import type { SseEvent } from "../../../src/ir/sse-event";
import { loadRecordings } from "../../replay/recording";

const chunk = (content: string, extra = "") =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]${extra}}`;

/** The frame as a decoder parsed it (undefined: not JSON). */
function parsed(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

function learned(data: string, text: string): DeltaFrameShape {
  const shape = new DeltaFrameShape();
  shape.learn({ data }, parsed(data), { type: "text_delta", text });
  return shape;
}

describe("DeltaFrameShape", () => {
  test("a frame of the learned shape gives its new text; any other frame is left to the parser", () => {
    const shape = learned(chunk("Hello"), "Hello");
    expect(shape.match({ data: chunk(" world") })).toEqual({ type: "text_delta", text: " world" });
    expect(shape.match({ data: chunk('say "hi"\n\u00e9\ud83d\ude00') })).toEqual({ type: "text_delta", text: 'say "hi"\n\u00e9\ud83d\ude00' });
    // Another field changed, a named event, an empty text (which the decoder drops):
    expect(shape.match({ data: chunk("x", ',"usage":null') })).toBeUndefined();
    expect(shape.match({ data: chunk("x"), event: "message" })).toBeUndefined();
    expect(shape.match({ data: chunk("") })).toBeUndefined();
  });

  test("a tool call's argument text keeps its call's index; values of ignored fields may change", () => {
    const frame = (args: string, sequence: number, padding: string) =>
      `{"type":"x","sequence_number":${sequence},"delta":{"index":2,"arguments":${JSON.stringify(args)}},"obfuscation":${JSON.stringify(padding)}}`;
    const shape = new DeltaFrameShape([
      { key: "sequence_number", value: "integer" },
      { key: "obfuscation", value: "string" },
    ]);
    shape.learn({ data: frame('{"a":', 4, "xy") }, parsed(frame('{"a":', 4, "xy")), { type: "tool_call_delta", index: 2, argumentsDelta: '{"a":' });
    expect(shape.match({ data: frame("1}", 5, "pqr\\") })).toEqual({ type: "tool_call_delta", index: 2, argumentsDelta: "1}" });
    for (const bad of ['{"type":"x","sequence_number":05,', '{"type":"x","sequence_number":-5,', '{"type":"x","sequence_number":5.5,', '{"type":"x","sequence_number":"5",']) {
      expect(shape.match({ data: frame("1}", 5, "p").replace('{"type":"x","sequence_number":5,', bad) })).toBeUndefined();
    }
    expect(shape.match({ data: frame("1}", 5, "p").replace('"obfuscation":"p"', '"obfuscation":"\\q"') })).toBeUndefined();
    expect(shape.match({ data: frame("1}", 5, "p").replace('"obfuscation":"p"', '"obfuscation":null') })).toBeUndefined();
  });

  test("only a well-formed string literal fits: anything else is parsed, and fails, as before", () => {
    const shape = learned(chunk("Hello"), "Hello");
    const [prefix, suffix] = chunk("\u0000").split('"\\u0000"') as [string, string];
    for (const middle of ['"a"b"', '"a\\"', '"a\nb"', '"\\x"', '"a', 'a"', "12", '"a" ', '"\\ud800"x"']) {
      expect(shape.match({ data: prefix + middle + suffix })).toBeUndefined();
    }
    // An escaped quote and a lone surrogate escape are well-formed JSON.
    expect(shape.match({ data: `${prefix}"a\\"b"${suffix}` })).toEqual({ type: "text_delta", text: 'a"b' });
    expect(shape.match({ data: `${prefix}"\\ud800"${suffix}` })).toEqual({ type: "text_delta", text: "\ud800" });
  });

  test("a text that is not exactly one field teaches nothing", () => {
    // The same literal twice (the text equals another value).
    expect(learned(`{"model":"m","delta":{"content":"m"}}`, "m").match({ data: `{"model":"m","delta":{"content":"n"}}` })).toBeUndefined();
    // The literal found is a key, while the text came from an escaped value.
    const keyed = `{"hi":1,"delta":{"content":"h\\u0069"}}`;
    expect(learned(keyed, "hi").match({ data: keyed.replace('"hi":1', '"ho":1') })).toBeUndefined();
    // The literal found is not the field the text was read from (duplicate keys: the last wins).
    const duplicate = `{"delta":{"content":"a","content":"b"}}`;
    expect(learned(duplicate, "a").match({ data: `{"delta":{"content":"c","content":"b"}}` })).toBeUndefined();
    // Not JSON at all.
    expect(learned(`{"content":"a"`, "a").match({ data: `{"content":"b"` })).toBeUndefined();
  });

  test("forget() drops the shape, and a stream whose shapes never fit stops learning", () => {
    const shape = learned(chunk("a"), "a");
    shape.forget();
    expect(shape.match({ data: chunk("b") })).toBeUndefined();
    // Two shapes that no frame fitted (a field that changes every time): no third.
    const stream = new DeltaFrameShape();
    stream.learn({ data: chunk("a", ',"n":1') }, parsed(chunk("a", ',"n":1')), { type: "text_delta", text: "a" });
    stream.learn({ data: chunk("b", ',"n":2') }, parsed(chunk("b", ',"n":2')), { type: "text_delta", text: "b" });
    stream.learn({ data: chunk("c", ',"n":3') }, parsed(chunk("c", ',"n":3')), { type: "text_delta", text: "c" });
    expect(stream.match({ data: chunk("d", ',"n":3') })).toBeUndefined();
    // A shape that fitted once does not count against the stream.
    const used = new DeltaFrameShape();
    for (let n = 0; n < 5; n++) {
      used.learn({ data: chunk("a", `,"n":${n}`) }, parsed(chunk("a", `,"n":${n}`)), { type: "text_delta", text: "a" });
      expect(used.match({ data: chunk("b", `,"n":${n}`) })).toEqual({ type: "text_delta", text: "b" });
    }
  });
});

describe("KnownShapes: shapes proven by one stream, for the next", () => {
  const OPEN = [
    { key: "id", value: "string" as const, per: "stream" as const },
    { key: "created", value: "integer" as const, per: "stream" as const },
  ];
  const streamChunk = (id: string, created: number, content: string) => chunk(content).replace('"id":"chatcmpl-1"', `"id":"${id}"`).replace('"created":1', `"created":${created}`);

  test("a text shape another stream proved fits this stream's chunk (other id and time) only where the decoder allows it", () => {
    const known = new KnownShapes();
    const first = new DeltaFrameShape(OPEN, known);
    const data = streamChunk("chatcmpl-a", 100, "Hello");
    first.learn({ data }, parsed(data), { type: "text_delta", text: "Hello" }, true);
    expect(known.size).toBe(1);
    const next = new DeltaFrameShape(OPEN, known);
    const other = { data: streamChunk("chatcmpl-b", 200, "Hi") };
    expect(next.match(other)).toBeUndefined();
    expect(next.match(other, true)).toEqual({ type: "text_delta", text: "Hi" });
    // Adopted as the stream's own, its id and time fixed: the stream's next chunk fits it, another stream's does not.
    expect(next.match({ data: streamChunk("chatcmpl-b", 200, " there") })).toEqual({ type: "text_delta", text: " there" });
    expect(next.match({ data: streamChunk("chatcmpl-c", 200, " there") })).toBeUndefined();
    expect(next.match({ data: streamChunk("chatcmpl-b", 201, " there") })).toBeUndefined();
    // The same holds for the stream that learned it.
    expect(first.match({ data: streamChunk("chatcmpl-a", 100, "!") })).toEqual({ type: "text_delta", text: "!" });
    expect(first.match({ data: streamChunk("chatcmpl-z", 100, "!") })).toBeUndefined();
    // Another model (fixed text) does not fit.
    expect(new DeltaFrameShape(OPEN, known).match({ data: streamChunk("chatcmpl-c", 300, "x").replace('"model":"m"', '"model":"n"') }, true)).toBeUndefined();
  });

  test("what is kept: a stream's first shape, if the decoder calls it state-free, never argument text, each once, the newest few", () => {
    const known = new KnownShapes(3);
    const stream = () => new DeltaFrameShape(OPEN, known);
    const data = streamChunk("chatcmpl-a", 1, "a");
    stream().learn({ data }, parsed(data), { type: "text_delta", text: "a" });
    expect(known.size).toBe(0);
    stream().learn({ data }, parsed(data), { type: "text_delta", text: "a" }, true);
    stream().learn({ data: streamChunk("chatcmpl-z", 9, "b") }, parsed(streamChunk("chatcmpl-z", 9, "b")), { type: "text_delta", text: "b" }, true);
    expect(known.size).toBe(1);
    const args = `{"type":"x","delta":{"index":2,"arguments":"{\\"a\\":"}}`;
    stream().learn({ data: args }, parsed(args), { type: "tool_call_delta", index: 2, argumentsDelta: '{"a":' }, true);
    expect(known.size).toBe(1);
    // A stream's later shapes are not kept (known shapes are asked only for a stream's first).
    const later = stream();
    later.learn({ data: args }, parsed(args), { type: "tool_call_delta", index: 2, argumentsDelta: '{"a":' });
    const other = chunk("r", ',"x":1');
    later.learn({ data: other }, parsed(other), { type: "text_delta", text: "r" }, true);
    expect(known.size).toBe(1);
    // A hostile upstream's ever-new shapes, stream after stream, push out older ones; the count stays bounded.
    for (let n = 0; n < 20; n++) {
      const extra = chunk("t", `,"n${n}":1`);
      new DeltaFrameShape(OPEN, known).learn({ data: extra }, parsed(extra), { type: "text_delta", text: "t" }, true);
    }
    expect(known.size).toBe(3);
    // A large frame (its logprobs, say) teaches its own stream, and is not kept for others.
    const large = new KnownShapes();
    const big = chunk("t", `,"logprobs":${JSON.stringify("p".repeat(8_000))}`);
    const bigShape = new DeltaFrameShape(OPEN, large);
    bigShape.learn({ data: big }, parsed(big), { type: "text_delta", text: "t" }, true);
    expect(large.size).toBe(0);
    expect(bigShape.match({ data: big.replace('"content":"t"', '"content":"u"') })).toEqual({ type: "text_delta", text: "u" });
  });

  test("an ignored field's key found twice keeps its value as fixed text; the shape still fits that stream", () => {
    const known = new KnownShapes();
    const twice = (text: string) => `{"id":"c1","choices":[{"delta":{"tool_calls":[{"id":"call_1","function":{"arguments":${JSON.stringify(text)}}}]}}]}`;
    const shape = new DeltaFrameShape(OPEN, known);
    shape.learn({ data: twice("{") }, parsed(twice("{")), { type: "tool_call_delta", index: 0, argumentsDelta: "{" });
    expect(shape.match({ data: twice("}") })).toEqual({ type: "tool_call_delta", index: 0, argumentsDelta: "}" });
    expect(shape.match({ data: twice("}").replace('"id":"c1"', '"id":"c2"') })).toBeUndefined();
  });
});

describe("the chat decoder reads a later stream's first text chunk by a shape an earlier stream proved", () => {
  const frame = (id: string, delta: string, finish = "null") =>
    `{"id":"${id}","object":"chat.completion.chunk","created":${id.length * 1000},"model":"gpt-known-shape","system_fingerprint":"fp_1","choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}]}`;
  const stream = (id: string, texts: string[], field = "content") => [
    { data: frame(id, '{"role":"assistant","content":"","refusal":null}') },
    ...texts.map((text) => ({ data: frame(id, `{"${field}":${JSON.stringify(text)}}`) })),
    { data: frame(id, "{}", '"stop"') },
    { data: "[DONE]" },
  ];

  test("no learning, and the same parts as parsing every chunk", () => {
    decodeAll(createChatStreamDecoder, stream("chatcmpl-first", ["Hello", " world"]), true);
    const learn = spyOn(DeltaFrameShape.prototype, "learn");
    const match = spyOn(DeltaFrameShape.prototype, "match");
    try {
      const later = stream("chatcmpl-second-stream", ["Hi", " there", "!"]);
      expect(decodeAll(createChatStreamDecoder, later, true)).toEqual(decodeAll(createChatStreamDecoder, later, false));
      expect(learn.mock.calls.length).toBe(0);
      // Read by a shape: every text chunk (the role chunk, the finish and [DONE] are parsed).
      expect(match.mock.results.filter((result) => result.value !== undefined).length).toBe(3);
    } finally {
      learn.mockRestore();
      match.mockRestore();
    }
  });

  test("not before the stream started: a first chunk of a known shape is parsed, for its start part", () => {
    decodeAll(createChatStreamDecoder, stream("chatcmpl-teach", ["a", "b"]), true);
    const early = stream("chatcmpl-early", ["x", "y"]).slice(1);
    const decoded = decodeAll(createChatStreamDecoder, early, true);
    expect(decoded).toEqual(decodeAll(createChatStreamDecoder, early, false));
    expect(decoded.parts[0]![0]).toMatchObject({ type: "start", id: "chatcmpl-early" });
  });

  test("a chunk whose warning its stream had already named teaches no other stream: the next stream names it too", () => {
    // Groq's executed_tools beside the text: named once a stream, so its later chunks are delta-only there.
    const withTools = (id: string) => stream(id, ["a", "b", "c"]).map((event) => ({ data: event.data.replace('{"content":', '{"executed_tools":[{"type":"search"}],"content":') }));
    decodeAll(createChatStreamDecoder, withTools("chatcmpl-tools-1"), true);
    const later = withTools("chatcmpl-tools-2");
    const decoded = decodeAll(createChatStreamDecoder, later, true);
    expect(decoded).toEqual(decodeAll(createChatStreamDecoder, later, false));
    expect(decoded.warnings).toMatchObject([{ code: "dropped_content", field: "output.executed_tools" }]);
  });

  test("a refusal's chunks teach no other stream: a later refusal still finishes as content_filter", () => {
    decodeAll(createChatStreamDecoder, stream("chatcmpl-refusal-1", ["I can't", " help"], "refusal"), true);
    const later = stream("chatcmpl-refusal-2", ["Sorry", " no"], "refusal");
    const decoded = decodeAll(createChatStreamDecoder, later, true);
    expect(decoded).toEqual(decodeAll(createChatStreamDecoder, later, false));
    expect(decoded.parts.flat().find((part) => part.type === "finish")).toMatchObject({ finish: { reason: "content_filter" } });
  });
});

type DecoderFactory = (options: { readShapes?: boolean }) => StreamDecoder;

/** Each decoder that reads shapes, and the field its text deltas carry their text in. */
const DECODERS: Partial<Record<ProtocolId, { create: DecoderFactory; textKey: string }>> = {
  "openai-chat": { create: createChatStreamDecoder, textKey: "content" },
  "anthropic-messages": { create: createAnthropicStreamDecoder, textKey: "text" },
  "openai-responses": { create: createResponsesStreamDecoder, textKey: "delta" },
};

/** Every event of a stream, decoded by a fresh decoder, with or without reading shapes. */
function decodeAll(create: DecoderFactory, events: readonly SseEvent[], readShapes: boolean): { parts: IrStreamPart[][]; end: IrStreamPart[]; warnings: unknown } {
  const decoder = create({ readShapes });
  const parts = events.map((event) => decoder.push(event));
  return { parts, end: decoder.end(), warnings: decoder.warnings };
}

function eventsOf(bytes: string): SseEvent[] {
  const parser = new SseParser();
  return [...parser.push(bytes), ...parser.end()];
}

/** The stream with frames a hostile or broken upstream could send put in after its second text delta. */
function variants(events: readonly SseEvent[], textKey: string): SseEvent[][] {
  const field = new RegExp(`"${textKey}":"[^"\\\\]+"`);
  const texts = events.flatMap((event, i) => (field.test(event.data) ? [i] : []));
  const textAt = texts[1];
  if (textAt === undefined) return [];
  const at = textAt + 1;
  const frame = events[textAt]!.data;
  const withData = (data: string) => ({ ...events[textAt]!, data });
  const withText = (literal: string) => withData(frame.replace(field, `"${textKey}":${literal}`));
  const insert = (...added: SseEvent[]) => [...events.slice(0, at), ...added, ...events.slice(at)];
  const cases = [
    insert(withText('"tab\\there \\"quoted\\" \\u00e9"'), withText('"\\ud83d\\ude00 emoji"')),
    insert(withText('""'), withText('"after empty"')),
    // Not JSON, in the learned shape: the parser's error, then nothing.
    insert(withText('"unterminated'), withText('"never read"')),
    insert(withText('"bad \\q escape"')),
    insert(withText('"raw\ncontrol"')),
    // A frame with a field more.
    insert(withData(frame.replace(/}$/, ',"extra":{"usage":null}}'))),
  ];
  // Values of the fields the decoders leave open: other integers and strings, and ones that are not JSON.
  for (const [pattern, values] of [
    [/"sequence_number":\d+/, ["7", "0", "01", "-1", "1.5", '"7"']],
    [/"obfuscation":"[^"\\\\]*"/, ['"x"', '""', '"\\u0041"', '"\\q"', "null"]],
  ] as const) {
    if (!pattern.test(frame)) continue;
    const key = pattern.source.slice(0, pattern.source.indexOf(":") + 1);
    cases.push(insert(...values.map((value) => withData(frame.replace(pattern, `${key}${value}`))), withText('"after"')));
  }
  // Chat: text with a nameless tool-call fragment (buffered, no part), twice, then its name: parsed every time.
  if (textKey === "content") {
    cases.push(
      insert(
        ...[0, 1].map(() => withData(frame.replace('"content":', '"tool_calls":[{"index":7,"function":{"arguments":"{\\"a\\":"}}],"content":'))),
        withData(frame.replace('"content":', '"tool_calls":[{"index":7,"id":"call_1","function":{"name":"f","arguments":"1}"}}],"content":')),
      ),
      // Argument text for an open call, alone, three times, then for a call not open yet: the last is parsed.
      insert(
        withData(frame.replace('"content":', '"tool_calls":[{"index":7,"id":"call_1","function":{"name":"f","arguments":""}}],"content":')),
        ...["{", '\\"a', '\\":1}'].map((args) => withData(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":7,"function":{"arguments":"${args}"}}]}}]}`)),
        withData(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":8,"function":{"arguments":"[1]"}}]}}]}`),
        withData(`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":8,"function":{"name":"g","arguments":""}}]}}]}`),
      ),
      insert(withData(frame.replace("}]", '}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}'))),
    );
  }
  // Messages: one block index started as a tool call and again as a web search, whose input is kept: its deltas are parsed every time.
  if (textKey === "text") {
    const block = (index: number, payload: string) => withData(`{"type":"content_block_${payload.startsWith('"content_block"') ? "start" : "delta"}","index":${index},${payload}}`);
    cases.push(
      insert(
        block(90, '"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}'),
        block(90, '"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}'),
        ...['{\\"query\\": ', '\\"cats', ' and dogs\\"}'].map((json) => block(90, `"delta":{"type":"input_json_delta","partial_json":"${json}"}`)),
        withData('{"type":"content_block_stop","index":90}'),
      ),
    );
  }
  return cases;
}

describe("decoders read delta frames by their shape exactly as they parse them", () => {
  for (const [protocol, decoder] of Object.entries(DECODERS)) {
    test(`${protocol}: every recorded real stream, and the same streams with hostile frames put in`, () => {
      const streams = loadRecordings().filter((recording) => recording.mode === "stream" && recording.protocol === protocol);
      expect(streams.length).toBeGreaterThan(5);
      let compared = 0;
      // How many frames the decoders read by their shape: the shortcut is really taken on real traffic.
      const match = spyOn(DeltaFrameShape.prototype, "match");
      try {
        for (const recording of streams) {
          const events = eventsOf(recording.bytes);
          for (const stream of [events, ...variants(events, decoder!.textKey)]) {
            expect(decodeAll(decoder!.create, stream, true)).toEqual(decodeAll(decoder!.create, stream, false));
            compared++;
          }
        }
        const shortcuts = match.mock.results.filter((result) => result.value !== undefined).length;
        expect(compared).toBeGreaterThan(streams.length * 4);
        expect(shortcuts).toBeGreaterThan(150);
      } finally {
        match.mockRestore();
      }
    });
  }
});
