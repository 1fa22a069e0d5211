import { expect, test } from "bun:test";
import { reconnectDelaySecs } from "../../src/db/connect-database";

// postgres.js waits up to 20 s before a failed connection tries again, and queries queued on
// it wait as long: after a 2 s database restart, requests and /ready hung up to 20 s longer
// (test/deploy/faults.test.ts prints how soon both instances are ready again).
test("a pooled connection that failed tries again after 50 ms, doubling, never more than 1 s apart", () => {
  expect(reconnectDelaySecs(1)).toBe(0.05);
  expect(reconnectDelaySecs(2)).toBe(0.1);
  expect(reconnectDelaySecs(3)).toBe(0.2);
  for (const retries of [6, 10, 50, 1_000]) expect(reconnectDelaySecs(retries)).toBe(1);
});
