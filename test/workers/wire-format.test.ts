import { describe, expect, test } from "bun:test";
import { READY_SIGNAL, isCallMessage, isReplyMessage } from "../../src/workers/wire-format";

describe("wire-format guards", () => {
  test("accept well-formed calls and replies, including empty strings", () => {
    expect(isCallMessage({ id: 0, payload: "" })).toBe(true);
    expect(isReplyMessage({ id: 7, ok: true, body: "" })).toBe(true);
    expect(isReplyMessage({ id: 7, ok: false, body: "boom" })).toBe(true);
    // With a large string beside the payload or the answer.
    expect(isCallMessage({ id: 0, payload: "{}", text: "body" })).toBe(true);
    expect(isReplyMessage({ id: 7, ok: true, body: "{}", text: "" })).toBe(true);
  });

  test("reject the ready signal and anything a stray postMessage could send", () => {
    for (const message of [READY_SIGNAL, null, undefined, 3, "7", { id: "7", payload: "x" }, { id: 7 }, { payload: "x" }]) {
      expect(isCallMessage(message)).toBe(false);
      expect(isReplyMessage(message)).toBe(false);
    }
    expect(isReplyMessage({ id: 7, ok: true, body: 42 })).toBe(false);
    expect(isCallMessage({ id: 0, payload: "{}", text: 42 })).toBe(false);
    expect(isReplyMessage({ id: 7, ok: true, body: "{}", text: null })).toBe(false);
  });
});
