import { describe, expect, test } from "bun:test";
import { inSendOrder } from "../../src/db/in-send-order";

const after = <T>(ms: number, outcome: () => T): Promise<T> => new Promise((resolve) => setTimeout(resolve, ms)).then(outcome);

describe("inSendOrder", () => {
  test("resolves once every statement has", async () => {
    const done: number[] = [];
    await inSendOrder([after(15, () => done.push(1)), after(1, () => done.push(2))]);
    expect(done.sort()).toEqual([1, 2]);
    await inSendOrder([]);
  });

  test("throws the first failure in send order, though a later statement failed sooner, and only once every statement has settled", async () => {
    let lastSettled = false;
    const cause = after(20, () => {
      throw new Error("the cause");
    });
    const aborted = after(1, () => {
      throw new Error("transaction is aborted");
    });
    const slow = after(40, () => (lastSettled = true));
    await expect(inSendOrder([Promise.resolve(1), cause, aborted, slow])).rejects.toThrow("the cause");
    expect(lastSettled).toBe(true);
  });
});
