import { afterAll, beforeAll, expect, test } from "bun:test";
import type postgres from "postgres";
import type { InferenceHarness } from "../support/inference-harness";
import { UPSTREAM, flush, recordsFor, send, startMeteringHarness, stopMeteringHarness } from "../metering/metering-support";

let harness: InferenceHarness;
let sql: postgres.Sql;
beforeAll(async () => {
  ({ harness, sql } = await startMeteringHarness());
});
afterAll(() => stopMeteringHarness(harness));

test("a fault of ours after admission is answered with a 500 and still settles: the record is written and the reservation goes back", async () => {
  const account = await harness.server.createAccount(undefined, 10_000_000);
  const translator = harness.server.server.services.translator;
  const openStream = translator.openStream;
  // A bug past admission: the stream's translation session cannot be opened.
  translator.openStream = () => {
    throw new Error("translation session unavailable");
  };
  const requestId = `fault-${crypto.randomUUID()}`;
  try {
    harness.mocks.openai.queueScenarios({ kind: "text" });
    const sent = await send(harness.server.url, account.apiKey, "openai-chat", UPSTREAM["openai-chat"].model, { stream: true, requestId });
    expect(sent.status).toBe(500);
  } finally {
    translator.openStream = openStream;
  }
  await flush(harness);
  const records = await recordsFor(sql, requestId);
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ status: "failed", status_code: 500 });
  // With nothing in flight the idle lease goes back to the wallet, leaving nothing reserved.
  await harness.server.server.services.walletLeases.tick(Date.now() + 60_000);
  const [wallet] = await sql`select reserved_micro_usd from wallets where account_id = ${account.accountId}`;
  expect(Number(wallet!.reserved_micro_usd)).toBe(0);
});
