import { expect, test } from "bun:test";
import { IdleCollector } from "../../src/http/idle-collector";

const QUIET_MS = 30;

/** Resolves once `collections()` reaches `count`, polling (the collector runs from a timer). */
async function untilCollected(collections: () => number, count: number): Promise<void> {
  while (collections() < count) await Bun.sleep(5);
}

test("once requests have been served and none is in progress for a while, the heap is collected once", async () => {
  let collections = 0;
  const collector = new IdleCollector(() => collections++, QUIET_MS);
  collector.requestStarted();
  collector.requestStarted();
  collector.requestEnded();
  collector.requestEnded();
  await untilCollected(() => collections, 1);
  // Quiet, and nothing served since: no second collection.
  await Bun.sleep(QUIET_MS * 4);
  expect(collections).toBe(1);
  // Served again: collected again once quiet.
  collector.requestStarted();
  collector.requestEnded();
  await untilCollected(() => collections, 2);
});

test("no collection while a request is in progress, however long it takes", async () => {
  let collections = 0;
  const collector = new IdleCollector(() => collections++, QUIET_MS);
  collector.requestStarted();
  collector.requestStarted();
  collector.requestEnded();
  await Bun.sleep(QUIET_MS * 4);
  expect(collections).toBe(0);
  collector.requestEnded();
  await untilCollected(() => collections, 1);
});

test("a server that has served nothing never collects", async () => {
  let collections = 0;
  new IdleCollector(() => collections++, QUIET_MS);
  await Bun.sleep(QUIET_MS * 4);
  expect(collections).toBe(0);
});
