import { describe, expect, test } from "bun:test";
import { newId, newTimeOrderedId } from "../../src/ids";
import { requestIdFrom } from "../../src/pipeline/request-id";

describe("ids", () => {
  test("newId: prefix, then the requested number of base36 characters, all distinct over 10,000 draws", () => {
    const ids = Array.from({ length: 10_000 }, () => newId("ns", 16));
    for (const id of ids.slice(0, 50)) expect(id).toMatch(/^ns_[a-z0-9]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("newTimeOrderedId: same shape as newId, sorts by creation time across milliseconds, distinct within one", async () => {
    const first = newTimeOrderedId("rq");
    const sameMillisecond = Array.from({ length: 1_000 }, () => newTimeOrderedId("rq"));
    await Bun.sleep(3);
    const later = newTimeOrderedId("rq");
    expect(first).toMatch(/^rq_[a-z0-9]{20}$/);
    expect(first < later).toBe(true);
    expect(Number.parseInt(later.slice(3, 12), 36)).toBeGreaterThanOrEqual(Date.now() - 1_000);
    expect(new Set(sameMillisecond).size).toBe(1_000);
  });

  test("a generated request id is a time-ordered UUIDv7; a sane client id is kept, anything else replaced", async () => {
    const generated = requestIdFrom(new Headers());
    await Bun.sleep(2);
    const next = requestIdFrom(new Headers());
    expect(generated).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(generated < next).toBe(true);
    expect(requestIdFrom(new Headers({ "x-request-id": "client-id-1" }))).toBe("client-id-1");
    expect(requestIdFrom(new Headers({ "x-request-id": "has space" }))).not.toBe("has space");
    expect(requestIdFrom(new Headers({ "x-request-id": "x".repeat(129) }))).toHaveLength(36);
  });
});
