import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../support/test-server";
import { usageStatsCache, USAGE_STATS_TTL_MS } from "../../src/public/stats-routes";
import type { UsageStats } from "../../src/public/usage-stats";
import type { Sql } from "../../src/db/connect-database";
import { countNamedQuery } from "../support/named-query-counter";

const DAY_MS = 24 * 60 * 60 * 1000;

let server: TestServer;
let accountId: string;
let sql: Sql;
let rowCounter = 0;

beforeAll(async () => {
  server = await startTestServer();
  accountId = (await server.createAccount()).accountId;
  sql = server.server.services.db.sql;
});
afterAll(() => server.close());

beforeEach(async () => {
  await sql`delete from requests`;
  await sql`select usage_rollups_rebuild(null)`;
  const cache = usageStatsCache(server.server.services);
  cache.clear();
  cache.setClock(Date.now);
});

interface Row {
  model: string | null;
  status?: "succeeded" | "failed" | "cancelled";
  prompt?: number;
  completion?: number;
  reasoning?: number;
  createdAt?: Date;
}

/** A request record written straight into the table, as the metering batch would. */
async function insertRequest(row: Row): Promise<void> {
  const id = `req_stats_${++rowCounter}`;
  const status = row.status ?? "succeeded";
  const createdAt = row.createdAt ?? daysAgo(0);
  await sql`
    insert into requests (id, request_id, account_id, status, status_code, billing_status, model_id, provider_id, streamed,
                          prompt_tokens, completion_tokens, reasoning_tokens, usage_evidence, created_at, completed_at)
    values (${id}, ${id}, ${accountId}, ${status}, ${status === "succeeded" ? 200 : 502}, 'computed', ${row.model}, 'openai', false,
            ${row.prompt ?? 0}, ${row.completion ?? 0}, ${row.reasoning ?? 0}, '{}'::jsonb, ${createdAt}, ${createdAt})`;
  // Written around the metering writer: the usage rollups (migration 0034) are recomputed.
  await sql`select usage_rollups_rebuild(${accountId})`;
}

/** `n` whole days before now, less a second, so a row is never in the future. */
function daysAgo(n: number): Date {
  return new Date(Date.now() - n * DAY_MS - 1000);
}

function utcDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

async function stats(query = ""): Promise<UsageStats> {
  const response = await server.api<UsageStats>("GET", `/v1/stats/usage${query}`);
  expect(response.status).toBe(200);
  return response.body;
}

describe("GET /v1/stats/usage", () => {
  test("needs no credential and answers an empty platform with zero totals, no models and one empty item per day", async () => {
    const body = await stats("?days=3");
    expect(body.window.bucket).toBe("day");
    expect(body.window.days).toBe(3);
    expect(body.totals).toEqual({ prompt_tokens: 0, completion_tokens: 0, reasoning_tokens: 0, request_count: 0, total_tokens: 0 });
    expect(body.models).toEqual([]);
    expect(body.open_weight_token_share).toBe(0);
    expect(body.series).toHaveLength(3);
    for (const day of body.series) expect(day).toMatchObject({ request_count: 0, total_tokens: 0, by_model: {} });
  });

  test("only succeeded requests are counted: failed and cancelled rows change nothing", async () => {
    await insertRequest({ model: "openai/gpt-5", prompt: 100, completion: 50 });
    await insertRequest({ model: "openai/gpt-5", status: "failed", prompt: 1000, completion: 1000 });
    await insertRequest({ model: "openai/gpt-4.1", status: "cancelled", prompt: 700, completion: 300 });
    const body = await stats();
    expect(body.totals).toEqual({ prompt_tokens: 100, completion_tokens: 50, reasoning_tokens: 0, request_count: 1, total_tokens: 150 });
    expect(body.models.map((m) => m.id)).toEqual(["openai/gpt-5"]);
    expect(body.models[0]!.request_count).toBe(1);
  });

  test("completion tokens already include reasoning, so total tokens are prompt plus completion with reasoning not added again", async () => {
    await insertRequest({ model: "deepseek/deepseek-reasoner", prompt: 100, completion: 60, reasoning: 40 });
    await insertRequest({ model: "deepseek/deepseek-reasoner", prompt: 10, completion: 5, reasoning: 5 });
    const body = await stats();
    expect(body.totals).toEqual({ prompt_tokens: 110, completion_tokens: 65, reasoning_tokens: 45, request_count: 2, total_tokens: 175 });
    expect(body.models[0]).toMatchObject({ prompt_tokens: 110, completion_tokens: 65, total_tokens: 175, request_count: 2 });
    expect(body.series.at(-1)!.total_tokens).toBe(175);
  });

  test("the series has one item per UTC day of the window, oldest first and ending today, including days without traffic", async () => {
    const threeDaysAgo = daysAgo(3);
    await insertRequest({ model: "openai/gpt-5", prompt: 10, completion: 5, createdAt: threeDaysAgo });
    await insertRequest({ model: "openai/gpt-5", prompt: 1, completion: 1 });
    const before = Date.now();
    const body = await stats("?days=5");
    const dates = body.series.map((d) => d.date);
    expect(dates).toHaveLength(5);
    expect(dates.at(-1)).toBe(utcDate(new Date()));
    for (let i = 1; i < dates.length; i += 1) {
      expect(Date.parse(`${dates[i]}T00:00:00Z`) - Date.parse(`${dates[i - 1]}T00:00:00Z`)).toBe(DAY_MS);
    }
    expect(body.window.days).toBe(5);
    expect(body.window.from).toBe(`${dates[0]}T00:00:00.000Z`);
    expect(Date.parse(body.window.to)).toBeGreaterThanOrEqual(before);
    const busy = body.series.find((d) => d.date === utcDate(threeDaysAgo))!;
    expect(busy).toMatchObject({ request_count: 1, total_tokens: 15, by_model: { "openai/gpt-5": 15 } });
    expect(body.series.filter((d) => d.total_tokens === 0)).toHaveLength(3);
    // A model with no traffic on a day still appears there, with 0.
    for (const day of body.series) expect(Object.keys(day.by_model)).toEqual(["openai/gpt-5"]);
  });

  test("rows before the window's first UTC day are left out", async () => {
    await insertRequest({ model: "openai/gpt-5", prompt: 10, completion: 5, createdAt: daysAgo(2) });
    await insertRequest({ model: "openai/gpt-4.1", prompt: 3, completion: 4 });
    const body = await stats("?days=1");
    expect(body.models.map((m) => m.id)).toEqual(["openai/gpt-4.1"]);
    expect(body.totals.total_tokens).toBe(7);
  });

  test("days is clamped into 1–90: 0 gives one day and 500 gives ninety", async () => {
    const one = await stats("?days=0");
    expect(one.window.days).toBe(1);
    expect(one.series).toHaveLength(1);
    const ninety = await stats("?days=500");
    expect(ninety.window.days).toBe(90);
    expect(ninety.series).toHaveLength(90);
    expect((await stats("?days=-4")).window.days).toBe(1);
    expect((await stats()).window.days).toBe(14);
  });

  test("top is clamped into 1–25: 0 shows one model per day and 30 shows twenty-five, the rest folded into other", async () => {
    for (let i = 0; i < 27; i += 1) await insertRequest({ model: `vendor/model-${String(i).padStart(2, "0")}`, prompt: 1000 - i * 10 });
    const keys = async (query: string) => Object.keys((await stats(query)).series.at(-1)!.by_model);
    expect(await keys("?top=0")).toEqual(["vendor/model-00", "other"]);
    const thirty = await keys("?top=30");
    expect(thirty).toHaveLength(26);
    expect(thirty.at(-1)).toBe("other");
    expect(thirty).toContain("vendor/model-24");
    expect(thirty).not.toContain("vendor/model-25");
    expect(await keys("?top=-3")).toHaveLength(2);
    expect(await keys("")).toHaveLength(9); // default top 8, plus other
  });

  test("a non-integer days or top is a 400 bad_request with an error description", async () => {
    for (const query of ["?days=abc", "?days=1.5", "?days=", "?top=x", "?top=2e1", "?days=7&days=8"]) {
      const response = await server.api("GET", `/v1/stats/usage${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe("bad_request");
      expect(typeof response.body.error_description).toBe("string");
      expect(response.body.error_description.length).toBeGreaterThan(0);
    }
  });

  test("top folds the other models into other on every day while models keeps every model, busiest first", async () => {
    await insertRequest({ model: "openai/gpt-5", prompt: 600, completion: 400, createdAt: daysAgo(1) }); // 1000
    await insertRequest({ model: "anthropic/claude-sonnet-4.5", prompt: 300, completion: 200 }); // 500
    await insertRequest({ model: "google/gemini-2.5-pro", prompt: 150, completion: 50, createdAt: daysAgo(1) }); // 200
    await insertRequest({ model: "x-ai/grok-4", prompt: 60, completion: 40 }); // 100
    await insertRequest({ model: "x-ai/grok-4", status: "failed", prompt: 9000, completion: 9000 });
    const body = await stats("?top=2&days=3");
    expect(body.models.map((m) => [m.id, m.total_tokens])).toEqual([
      ["openai/gpt-5", 1000],
      ["anthropic/claude-sonnet-4.5", 500],
      ["google/gemini-2.5-pro", 200],
      ["x-ai/grok-4", 100],
    ]);
    for (const day of body.series) {
      expect(Object.keys(day.by_model)).toEqual(["openai/gpt-5", "anthropic/claude-sonnet-4.5", "other"]);
      expect(Object.values(day.by_model).reduce((a, b) => a + b, 0)).toBe(day.total_tokens);
    }
    const other = body.series.reduce((sum, day) => sum + day.by_model.other!, 0);
    expect(other).toBe(300);
    expect(body.series.reduce((sum, day) => sum + day.request_count, 0)).toBe(4);
  });

  test("without more models than top there is no other bucket", async () => {
    await insertRequest({ model: "openai/gpt-5", prompt: 1, completion: 1 });
    const body = await stats("?top=1");
    for (const day of body.series) expect(Object.keys(day.by_model)).toEqual(["openai/gpt-5"]);
  });

  test("token shares sum to 1 and open_weight_token_share is the open-weights models' share, a model gone from the catalog counting as closed", async () => {
    await insertRequest({ model: "deepseek/deepseek-chat", prompt: 200, completion: 100 }); // open weights, 300
    await insertRequest({ model: "openai/gpt-5", prompt: 400, completion: 200 }); // 600
    await insertRequest({ model: "retired/old-model", prompt: 50, completion: 50 }); // not in the catalog, 100
    const body = await stats();
    const byId = new Map(body.models.map((m) => [m.id, m]));
    expect(byId.get("deepseek/deepseek-chat")!.open_weights).toBe(true);
    expect(byId.get("openai/gpt-5")!.open_weights).toBe(false);
    expect(byId.get("retired/old-model")!.open_weights).toBe(false);
    expect(byId.get("openai/gpt-5")!.token_share).toBeCloseTo(0.6, 10);
    expect(body.models.reduce((sum, m) => sum + m.token_share, 0)).toBeCloseTo(1, 10);
    expect(body.open_weight_token_share).toBeCloseTo(0.3, 10);
  });

  test("the result is cached five minutes per days: a row inserted after the first call stays invisible until the entry expires", async () => {
    await insertRequest({ model: "openai/gpt-5", prompt: 10, completion: 10 });
    const first = await server.api<UsageStats>("GET", "/v1/stats/usage?days=2");
    expect(first.body.totals.request_count).toBe(1);
    expect(first.headers.get("cache-control")).toMatch(/^public, max-age=(29\d|300)$/);

    await insertRequest({ model: "openai/gpt-5", prompt: 10, completion: 10 });
    const cached = await server.api<UsageStats>("GET", "/v1/stats/usage?days=2");
    expect(cached.body).toEqual(first.body);
    // Another top is cut from the same entry; another days is its own entry and sees the new row.
    expect((await stats("?days=2&top=3")).totals.request_count).toBe(1);
    expect((await stats("?days=3")).totals.request_count).toBe(2);

    const cache = usageStatsCache(server.server.services);
    const start = Date.now();
    cache.setClock(() => start + USAGE_STATS_TTL_MS - 10_000);
    const late = await server.api<UsageStats>("GET", "/v1/stats/usage?days=2");
    expect(late.body.totals.request_count).toBe(1);
    expect(Number(late.headers.get("cache-control")!.split("=")[1])).toBeLessThanOrEqual(11);
    cache.setClock(() => start + USAGE_STATS_TTL_MS + 1000);
    expect((await stats("?days=2")).totals.request_count).toBe(2);
  });

  test("every top of one days is cut from one computation: one database read and one cache entry, whatever top the callers ask for", async () => {
    await insertRequest({ model: "openai/gpt-5", prompt: 300, completion: 300 });
    await insertRequest({ model: "anthropic/claude-sonnet-4.5", prompt: 200, completion: 200, createdAt: daysAgo(1) });
    await insertRequest({ model: "x-ai/grok-4", prompt: 100, completion: 100 });
    const reads = countNamedQuery(server.server.services.db.read, "platformUsageByDayAndModel");
    try {
      const tops = Array.from({ length: 25 }, (_, i) => i + 1);
      const concurrent = await Promise.all(tops.map((top) => stats(`?days=2&top=${top}`)));
      const byTop = new Map(tops.map((top, i) => [top, concurrent[i]!]));
      for (const top of [1, 2, 3, 7]) expect(await stats(`?days=2&top=${top}`)).toEqual(byTop.get(top)!);
      expect(reads.count).toBe(1);
      expect(usageStatsCache(server.server.services).size).toBe(1);
      // Oldest day first: yesterday, then today.
      expect(byTop.get(1)!.series.map((day) => day.by_model)).toEqual([
        { "openai/gpt-5": 0, other: 400 },
        { "openai/gpt-5": 600, other: 200 },
      ]);
      expect(byTop.get(2)!.series.map((day) => day.by_model)).toEqual([
        { "openai/gpt-5": 0, "anthropic/claude-sonnet-4.5": 400, other: 0 },
        { "openai/gpt-5": 600, "anthropic/claude-sonnet-4.5": 0, other: 200 },
      ]);
      for (const top of tops.slice(2)) {
        expect(byTop.get(top)!.series.map((day) => day.by_model)).toEqual([
          { "openai/gpt-5": 0, "anthropic/claude-sonnet-4.5": 400, "x-ai/grok-4": 0 },
          { "openai/gpt-5": 600, "anthropic/claude-sonnet-4.5": 0, "x-ai/grok-4": 200 },
        ]);
      }
      for (const body of concurrent) expect(body.models.map((m) => m.id)).toEqual(["openai/gpt-5", "anthropic/claude-sonnet-4.5", "x-ai/grok-4"]);
    } finally {
      reads.stop();
    }
  });

  test("clearing the cache makes new rows visible at once", async () => {
    expect((await stats()).totals.request_count).toBe(0);
    await insertRequest({ model: "openai/gpt-5", prompt: 1, completion: 2 });
    expect((await stats()).totals.request_count).toBe(0);
    usageStatsCache(server.server.services).clear();
    expect((await stats()).totals.request_count).toBe(1);
  });
});
