import { describe, expect, test } from "bun:test";
import { SseParser } from "../../src/protocols/sse";
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
});
