import { describe, expect, spyOn, test } from "bun:test";
import { DeltaFrameShape } from "../../../src/protocols/shared/delta-frame-shape";
import { createChatStreamDecoder } from "../../../src/protocols/openai-chat/decode-stream";
import { createAnthropicStreamDecoder } from "../../../src/protocols/anthropic-messages/decode-stream";
import { createResponsesStreamDecoder } from "../../../src/protocols/openai-responses/decode-stream";
import { SseParser } from "../../../src/protocols/sse";
import type { IrStreamPart, ProtocolId, StreamDecoder } from "../../../src/ir";
import type { SseEvent } from "../../../src/ir/sse-event";
import { loadRecordings } from "../../replay/recording";

const chunk = (content: string, extra = "") =>
  `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${JSON.stringify(content)}},"finish_reason":null}]${extra}}`;

function learned(data: string, text: string): DeltaFrameShape {
  const shape = new DeltaFrameShape();
  shape.learn({ data }, "text_delta", text);
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

  test("only a well-formed string literal fits: anything else is parsed, and fails, as before", () => {
    const shape = learned(chunk("Hello"), "Hello");
    const [prefix, suffix] = chunk("\u0000").split('"\\u0000"') as [string, string];
    for (const middle of ['"a"b"', '"a\\"', '"a\nb"', '"\\x"', '"a', 'a"', "12", '"a" ', '"\\ud800"x"']) {
      expect(shape.match({ data: prefix + middle + suffix })).toBeUndefined();
    }
    // An escaped quote and a lone surrogate escape are well-formed JSON.
    expect(shape.match({ data: `${prefix}"a\\"b"${suffix}` })?.text).toBe('a"b');
    expect(shape.match({ data: `${prefix}"\\ud800"${suffix}` })?.text).toBe("\ud800");
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
    stream.learn({ data: chunk("a", ',"n":1') }, "text_delta", "a");
    stream.learn({ data: chunk("b", ',"n":2') }, "text_delta", "b");
    stream.learn({ data: chunk("c", ',"n":3') }, "text_delta", "c");
    expect(stream.match({ data: chunk("d", ',"n":3') })).toBeUndefined();
    // A shape that fitted once does not count against the stream.
    const used = new DeltaFrameShape();
    for (let n = 0; n < 5; n++) {
      used.learn({ data: chunk("a", `,"n":${n}`) }, "text_delta", "a");
      expect(used.match({ data: chunk("b", `,"n":${n}`) })?.text).toBe("b");
    }
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
      insert(withData(frame.replace("}]", '}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}'))),
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
