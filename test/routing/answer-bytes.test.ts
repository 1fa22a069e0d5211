import { describe, expect, test } from "bun:test";
import { AnswerBytes, AnswerReservation, LARGE_ANSWER_BYTES } from "../../src/routing/answer-bytes";
import { readBodyTextOrBytes } from "../../src/routing/body-reader";

const MiB = 1024 * 1024;

describe("AnswerBytes", () => {
  test("each account has its own room; what does not fit is not counted at all", () => {
    const room = new AnswerBytes(3 * MiB);
    expect(room.reserve("a", 2 * MiB)).toBe(true);
    expect(room.reserve("a", 2 * MiB)).toBe(false);
    expect(room.heldFor("a")).toBe(2 * MiB);
    expect(room.reserve("b", 2 * MiB)).toBe(true);
    expect(room.heldTotal()).toBe(4 * MiB);
    room.release("a", 2 * MiB);
    expect(room.heldFor("a")).toBe(0);
    expect(room.heldTotal()).toBe(2 * MiB);
    expect(room.reserve("a", 3 * MiB)).toBe(true);
    // Giving back more than was held takes only what was.
    room.release("b", 5 * MiB);
    expect(room.heldTotal()).toBe(3 * MiB);
    // 0: no bound.
    expect(new AnswerBytes(0).reserve("a", 1e12)).toBe(true);
  });

  test("a reservation counts an answer once it is large, grows with it, and gives it all back", () => {
    const room = new AnswerBytes(4 * MiB);
    const answer = new AnswerReservation(room, "a");
    expect(answer.grow(LARGE_ANSWER_BYTES)).toBe(true);
    expect(room.heldFor("a")).toBe(0);
    expect(answer.grow(2 * MiB)).toBe(true);
    expect(answer.grow(3 * MiB)).toBe(true);
    expect(room.heldFor("a")).toBe(3 * MiB);
    expect(answer.grow(5 * MiB)).toBe(false);
    expect(room.heldFor("a")).toBe(3 * MiB);
    answer.release();
    expect(room.heldFor("a")).toBe(0);
  });
});

describe("readBodyTextOrBytes asks for room", () => {
  const body = "x".repeat(2 * MiB);
  const declared = () => new Response(body, { headers: { "content-length": String(body.length) } });

  test("for a declared length before reading: refused, the upstream is aborted and nothing is read", async () => {
    const asked: number[] = [];
    let aborted = 0;
    const error = await readBodyTextOrBytes(declared(), 1000, () => aborted++, 64 * MiB, 1024, (bytes) => (asked.push(bytes), false)).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "upstream_invalid_response" });
    expect(asked).toEqual([2 * MiB]);
    expect(aborted).toBe(1);
    expect(await readBodyTextOrBytes(declared(), 1000, () => {}, 64 * MiB, 1024, () => true)).toMatchObject({ byteLength: 2 * MiB });
  });

  test("without one, for the length so far as it is read, stopping at the first refusal", async () => {
    const chunked = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            for (let sent = 0; sent < 4; sent++) controller.enqueue(new Uint8Array(MiB).fill(120));
            controller.close();
          },
        }),
      );
    const asked: number[] = [];
    let aborted = 0;
    const error = await readBodyTextOrBytes(chunked(), 1000, () => aborted++, 64 * MiB, 1024, (bytes) => (asked.push(bytes), bytes <= 2 * MiB)).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "upstream_invalid_response" });
    expect(asked.at(-1)).toBeGreaterThan(2 * MiB);
    expect(asked.at(-1)).toBeLessThanOrEqual(3 * MiB);
    expect(aborted).toBe(1);
  });
});
