import { describe, expect, spyOn, test } from "bun:test";
import { SseParser } from "../../src/protocols/sse";
import { MAX_SSE_EVENT_CHARS } from "../../src/protocols/sse/parse-sse";
import { loadRecordings } from "../replay/recording";
import { REPLAY_SEEDS, splitAtRandom } from "../support/split-chunks";

const WIRE =
  ": keepalive\n\n" +
  "event: message_start\r\ndata: {\"a\":1}\r\n\r\n" +
  "data: line one\ndata: line two\n\n" +
  "id: 7\nevent: ping\ndata: {}\n\n" +
  "data: [DONE]\n\n";

function parseAll(pieces: string[]) {
  const parser = new SseParser();
  const events = pieces.flatMap((piece) => parser.push(piece));
  return [...events, ...parser.end()];
}

describe("SseParser", () => {
  test("parses named events, multi-line data, comments and CRLF", () => {
    expect(parseAll([WIRE])).toEqual([
      { event: "message_start", data: '{"a":1}' },
      { data: "line one\nline two" },
      { event: "ping", data: "{}", id: "7" },
      { data: "[DONE]", id: "7" },
    ]);
  });

  test("gives the same events whatever the chunk boundaries", () => {
    const whole = parseAll([WIRE]);
    for (const seed of REPLAY_SEEDS) expect(parseAll(splitAtRandom(WIRE, seed))).toEqual(whole);
    expect(parseAll(WIRE.split(""))).toEqual(whole);
  });

  test("any mix of CR, LF and CRLF line endings, cut anywhere, gives the events of the whole text read line by line", () => {
    // The reference: the whole text split into lines at once (the spec's three line endings).
    const reference = (wire: string) => {
      const events: Array<{ data: string }> = [];
      let data: string[] = [];
      for (const line of wire.split(/\r\n|\r|\n/)) {
        if (line === "") {
          if (data.length > 0) events.push({ data: data.join("\n") });
          data = [];
        } else if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
      if (data.length > 0) events.push({ data: data.join("\n") });
      return events;
    };
    let state = 7;
    const random = (n: number) => ((state = (state * 1103515245 + 12345) % 2147483648), state % n);
    const endings = ["\n", "\r", "\r\n"];
    for (let round = 0; round < 300; round++) {
      let wire = "";
      for (let event = 0; event < 1 + random(4); event++) {
        for (let line = 0; line < 1 + random(3); line++) wire += `data: {"n":${round},"line":${line},"s":"a\\r\\nb"}` + endings[random(3)];
        if (random(4) === 0) wire += ": comment" + endings[random(3)];
        wire += endings[random(3)];
      }
      const cuts = [0];
      for (let at = 1 + random(9); at < wire.length; at += 1 + random(9)) cuts.push(at);
      const pieces = cuts.map((at, i) => wire.slice(at, cuts[i + 1] ?? wire.length));
      expect(parseAll(pieces)).toEqual(reference(wire));
    }
  });

  test("dispatches a final event that lacks its blank line at end of input", () => {
    expect(parseAll(["data: tail"])).toEqual([{ data: "tail" }]);
  });

  test("an event that never ends, by one endless line or by endless data lines, is refused past the limit", () => {
    const line = new SseParser(1_000);
    expect(line.push("data: " + "x".repeat(900))).toEqual([]);
    expect(() => line.push("x".repeat(200))).toThrow(expect.objectContaining({ kind: "upstream_invalid_response" }));
    const lines = new SseParser(1_000);
    for (let i = 0; i < 8; i++) lines.push(`data: ${"y".repeat(100)}\n`);
    expect(() => lines.push(`data: ${"y".repeat(300)}\n`)).toThrow(expect.objectContaining({ kind: "upstream_invalid_response" }));
    // Events that end are counted each on its own, whatever the stream's length.
    const many = new SseParser(1_000);
    let events = 0;
    for (let i = 0; i < 100; i++) events += many.push(`data: ${"z".repeat(500)}\n\n`).length;
    expect(events).toBe(100);
  });

  describe("whole frames read in one step", () => {
    /** Each push's events, by a parser with the shortcut and by one reading every chunk line by line. */
    function bothWays(pieces: string[]): { whole: unknown[][]; lines: unknown[][] } {
      const whole = new SseParser();
      const lines = new SseParser(MAX_SSE_EVENT_CHARS, false);
      return {
        whole: [...pieces.map((piece) => whole.push(piece)), whole.end()],
        lines: [...pieces.map((piece) => lines.push(piece)), lines.end()],
      };
    }

    test("give every push the events line-by-line reading gives it, in every form a frame can take, cut anywhere", () => {
      // A 32-bit LCG (Numerical Recipes' constants), its high bits taken.
      let state = 11;
      const random = (n: number) => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0), Math.floor((state / 4294967296) * n));
      // Forms the shortcut reads, forms it must leave to the line loop, and what changes an event (an id, a comment).
      const frames = [
        () => `data: {"n":${random(100)},"text":"a b"}\n\n`,
        () => `event: content_block_delta\ndata: {"delta":"${random(100)}"}\n\n`,
        () => "data: \n\n",
        () => "data:  two spaces\n\n",
        () => "data:no space\n\n",
        () => "event:ping\ndata: {}\n\n",
        () => "event: a:b\ndata: x\n\n",
        () => "event: lonely\n\n",
        () => "data: one\ndata: two\n\n",
        () => `id: ${random(9)}\ndata: with id\n\n`,
        () => ": keepalive\n\n",
        () => "data: [DONE]\n\n",
        () => "data: cr\r\n\r\n",
        () => "event: e\r\ndata: cr\r\r",
        () => "retry: 10\ndata: r\n\n",
      ];
      let checked = 0;
      for (let round = 0; round < 400; round++) {
        let wire = "";
        for (let i = 0; i < 1 + random(8); i++) wire += frames[random(frames.length)]!();
        const pieces = random(3) === 0 ? [wire] : splitAtRandom(wire, round, 1 + random(12));
        const { whole, lines } = bothWays(pieces);
        expect(whole).toEqual(lines);
        checked += lines.flat().length;
      }
      expect(checked).toBeGreaterThan(1_000);
    });

    test("every recorded real stream gives the same events, whole and in pieces", () => {
      const streams = loadRecordings().filter((recording) => recording.mode === "stream");
      expect(streams.length).toBeGreaterThan(50);
      for (const recording of streams) {
        for (const pieces of [[recording.bytes], ...REPLAY_SEEDS.map((seed) => splitAtRandom(recording.bytes, seed))]) {
          const { whole, lines } = bothWays(pieces);
          expect(whole, recording.id).toEqual(lines);
        }
      }
    });

    test("a chunk of whole frames, as upstreams send them, is read by the shortcut alone", () => {
      const read = spyOn(SseParser.prototype as unknown as { readWholeFrames(text: string, events: unknown[]): number }, "readWholeFrames");
      try {
        const chat = 'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n';
        const messages = 'event: content_block_delta\ndata: {"type":"content_block_delta"}\n\n';
        const parser = new SseParser();
        expect(parser.push(chat)).toEqual([{ data: '{"choices":[{"delta":{"content":"Hi"}}]}' }, { data: "[DONE]" }]);
        expect(parser.push(messages)).toEqual([{ event: "content_block_delta", data: '{"type":"content_block_delta"}' }]);
        expect(read.mock.results.map((result) => result.value)).toEqual([chat.length, messages.length]);
      } finally {
        read.mockRestore();
      }
    });
  });
});
