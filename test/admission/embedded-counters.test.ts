import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRefusal } from "../../src/admission/admission-check";
import { PolicyCounters } from "../../src/admission/policy-counters";
import type { Config } from "../../src/config";
import { connectDatabase, type Database } from "../../src/db/connect-database";
import { migrate } from "../../src/db/migrate";
import { bound, effective, request } from "./admission-support";

let dataDir: string;
let db: Database;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "switchyard-admission-"));
  db = await connectDatabase({ databaseUrl: "", dataDir, databasePoolSize: 1 } as Config);
  await migrate(db.sql);
  // Starting the embedded database and migrating it takes seconds on a busy machine.
}, 60_000);
afterAll(async () => {
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test("the counters' functions run on the embedded database too", async () => {
  const counters = new PolicyCounters(db.sql);
  const policy = effective(
    bound("pol_embedded_budget", "budget", { window: "day", limit_micro_usd: 250 }),
    bound("pol_embedded_rate", "rate_limit", { window_secs: 60, max_requests: 2 }),
  );
  const first = await counters.admit(request(policy));
  if (isRefusal(first)) throw new Error(first.message);
  await first.settle({ chargeMicroUsd: 100 });
  const second = await counters.admit(request(policy));
  expect(isRefusal(second)).toBe(false);
  expect(await counters.admit(request(policy))).toMatchObject({ status: 402, code: "budget_exceeded" });
  if (!isRefusal(second)) await second.release();
  expect(isRefusal(await counters.admit(request(policy)))).toBe(false);
  expect(await counters.admit(request(policy, { costCeilingMicroUsd: 1 }))).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
}, 60_000);
