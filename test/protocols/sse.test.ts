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

  test("dispatches a final event that lacks its blank line at end of input", () => {
    expect(parseAll(["data: tail"])).toEqual([{ data: "tail" }]);
  });
});
