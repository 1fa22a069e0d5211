import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/db/connect-database";
import { insertRoutingPreset, replaceRoutingPreset, setRoutingPresetDisabled } from "../../src/db/queries/routing-presets";
import { RoutingPresetStore } from "../../src/routing/routing-preset-store";
import { createMigratedTestDatabase, type MigratedTestDatabase } from "../support/test-database";

let database: MigratedTestDatabase;
let sql: Sql;
/** Counts the statements sent, to show what a cached lookup costs. */
let queries = 0;

const tenant = { accountId: "acct_rp", namespaceId: "ns_rp" };
const spec = { model: "openai/gpt-4.1", system_prompt: "Be brief.", params: { temperature: 0.2, stop: "END" }, routing: { only: ["openai"], sort: "cost" } };

beforeAll(async () => {
  database = await createMigratedTestDatabase({ debug: () => void queries++ });
  sql = database.sql;
  await sql`insert into accounts (id, email) values ('acct_rp', 'rp@example.test')`;
  await sql`insert into namespaces (id, account_id, name) values ('ns_rp', 'acct_rp', 'default'), ('ns_rp2', 'acct_rp', 'second')`;
});
afterAll(() => database.close());

describe("RoutingPresetStore", () => {
  test("a stored preset reads as the resolution uses it, and a cached lookup (found or not) costs no query", async () => {
    const row = await insertRoutingPreset(sql, tenant, { id: "rp_one", name: "one", ...spec });
    const store = new RoutingPresetStore(sql, 60_000);
    expect(await store.find("ns_rp", "one")).toEqual({
      id: row.id,
      name: "one",
      model: "openai/gpt-4.1",
      systemPrompt: "Be brief.",
      params: { temperature: 0.2, stop: ["END"] },
      sort: "cost",
      only: ["openai"],
      disabled: false,
    });
    // Another namespace of the same account does not see it.
    expect(await store.find("ns_rp2", "one")).toBeNull();
    expect(await store.find("ns_rp", "missing")).toBeNull();
    const before = queries;
    for (let i = 0; i < 50; i++) {
      expect((await store.find("ns_rp", "one"))?.id).toBe("rp_one");
      expect(await store.find("ns_rp", "missing")).toBeNull();
    }
    expect(queries - before).toBe(0);
  });

  test("concurrent misses of one name share one query", async () => {
    await insertRoutingPreset(sql, tenant, { id: "rp_shared", name: "shared", ...spec });
    const store = new RoutingPresetStore(sql, 60_000);
    const before = queries;
    const found = await Promise.all(Array.from({ length: 20 }, () => store.find("ns_rp", "shared")));
    expect(found.every((preset) => preset?.id === "rp_shared")).toBe(true);
    expect(queries - before).toBe(1);
  });

  test("a change made through this instance applies at once; another instance sees it within its TTL", async () => {
    const ttlMs = 1_000; // outlasts the writes between a cached read and the check that it is still cached, on a loaded machine too
    const here = new RoutingPresetStore(sql, ttlMs);
    const there = new RoutingPresetStore(sql, ttlMs);
    expect(await here.find("ns_rp", "later")).toBeNull();
    expect(await there.find("ns_rp", "later")).toBeNull();
    await insertRoutingPreset(sql, tenant, { id: "rp_later", name: "later", ...spec });
    here.presetChanged("ns_rp", "later");
    expect((await here.find("ns_rp", "later"))?.id).toBe("rp_later");
    expect(await there.find("ns_rp", "later")).toBeNull();

    await setRoutingPresetDisabled(sql, tenant, "rp_later", true);
    here.presetChanged("ns_rp", "later");
    expect((await here.find("ns_rp", "later"))?.disabled).toBe(true);

    // A rename frees the old name and takes the new one at once.
    await replaceRoutingPreset(sql, tenant, "rp_later", "renamed", spec);
    here.presetChanged("ns_rp", "later", "renamed");
    expect(await here.find("ns_rp", "later")).toBeNull();
    expect((await here.find("ns_rp", "renamed"))?.id).toBe("rp_later");

    await Bun.sleep(ttlMs + 50);
    expect(await there.find("ns_rp", "later")).toBeNull();
    expect((await there.find("ns_rp", "renamed"))?.id).toBe("rp_later");
  });
});
