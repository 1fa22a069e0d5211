import { describe, expect, test } from "bun:test";
import { READY_SIGNAL, besideOf, isCallMessage, isReplyMessage, withBeside } from "../../src/workers/wire-format";

describe("wire-format guards", () => {
  test("accept well-formed calls and replies, including empty strings", () => {
    expect(isCallMessage({ id: 0, payload: "" })).toBe(true);
    expect(isReplyMessage({ id: 7, ok: true, body: "" })).toBe(true);
    expect(isReplyMessage({ id: 7, ok: false, body: "boom" })).toBe(true);
    // With large strings beside the payload or the answer.
    expect(isCallMessage({ id: 0, payload: "{}", texts: 1, text0: "body" })).toBe(true);
    expect(isReplyMessage({ id: 7, ok: true, body: "{}", texts: 2, text0: "", text1: "x" })).toBe(true);
    const { message, transfer } = withBeside({ id: 0, payload: "{}" }, { texts: ["a", "b"], chunks: [new Uint8Array([1])], blob: new Blob(["x"]) });
    expect(isCallMessage(message)).toBe(true);
    expect(transfer).toHaveLength(1);
    expect(besideOf(message)?.texts).toEqual(["a", "b"]);
    expect(besideOf(message)?.chunks).toEqual([new Uint8Array([1])]);
    expect(besideOf(message)?.blob).toBeInstanceOf(Blob);
    // With nothing beside, a message stays as small as it was.
    expect(withBeside({ id: 0, payload: "{}" }, { texts: [] }).message).toEqual({ id: 0, payload: "{}" });
    expect(besideOf({ id: 0, payload: "{}" } as never)).toBeUndefined();
  });

  test("reject the ready signal and anything a stray postMessage could send", () => {
    for (const message of [READY_SIGNAL, null, undefined, 3, "7", { id: "7", payload: "x" }, { id: 7 }, { payload: "x" }]) {
      expect(isCallMessage(message)).toBe(false);
      expect(isReplyMessage(message)).toBe(false);
    }
    expect(isReplyMessage({ id: 7, ok: true, body: 42 })).toBe(false);
    // A count its fields do not bear out, or one that is not a count.
    expect(isCallMessage({ id: 0, payload: "{}", texts: 1, text0: 42 })).toBe(false);
    expect(isCallMessage({ id: 0, payload: "{}", texts: 2, text0: "a" })).toBe(false);
    expect(isReplyMessage({ id: 7, ok: true, body: "{}", texts: 1, text0: null })).toBe(false);
    for (const texts of [-1, 1.5, "1", null, 1e9]) expect(isCallMessage({ id: 0, payload: "{}", texts })).toBe(false);
    expect(isCallMessage({ id: 0, payload: "{}", chunks: ["not bytes"] })).toBe(false);
    expect(isReplyMessage({ id: 7, ok: true, body: "{}", blob: "not a blob" })).toBe(false);
  });
});
