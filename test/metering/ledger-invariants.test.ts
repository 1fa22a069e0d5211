import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { spawnServerOnMocks, startDatabaseAndMocks, stopDatabaseAndMocks } from "../support/inference-harness";
import type { MockUpstreamSet } from "../support/mock-upstreams";
import type { TestDatabase } from "../support/test-database";

/**
 * The books balance under everything at once: a Switchyard process, several accounts
 * (some with a balance for a handful of requests), concurrent chat and Messages clients,
 * every upstream protocol, the mocks' failure scenarios (4xx, 429, 5xx, streams cut
 * midway, slow and hanging upstreams past short timeouts), fallback lists, and streams the
 * client abandons. After SIGTERM, for every account: the balance is the sum of its ledger,
 * nothing is reserved or leased, the balance is not negative, and there is one record per
 * request the server received.
 */
let db: TestDatabase;
let mocks: MockUpstreamSet;
beforeAll(async () => {
  ({ db, mocks } = await startDatabaseAndMocks());
});
afterAll(() => stopDatabaseAndMocks({ db, mocks }));

const CREDITS = [300, 3_000, 30_000, 1_000_000_000];
const LANES = 24;
const LOAD_MS = 3_000;

interface Account {
  id: string;
  key: string;
  responses: number;
  abandoned: number;
}

test("under failures, fallbacks and abandoned streams, every account's books balance after shutdown", async () => {
  const server = await spawnServerOnMocks(mocks, {
    DATABASE_URL: db.url,
    ADMIN_TOKEN: "op",
    LOG_LEVEL: "warn",
    UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "300",
    UPSTREAM_IDLE_TIMEOUT_MS: "300",
    SHUTDOWN_GRACE_MS: "5000",
  });
  const accounts: Account[] = [];
  for (const credit of CREDITS) {
    const created = (await fetch(`${server.url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: "Bearer op", "content-type": "application/json" },
      body: JSON.stringify({ email: `books-${credit}@example.test`, credit_micro_usd: credit }),
    }).then((r) => r.json())) as { account_id: string; api_key: string };
    accounts.push({ id: created.account_id, key: created.api_key, responses: 0, abandoned: 0 });
  }
  const catalog = (await fetch(`${server.url}/v1/models`).then((r) => r.json())) as { data: Array<{ id: string }> };
  const models = catalog.data.map((model) => model.id).filter((id) => id.startsWith("mock-"));
  expect(models.some((id) => id.includes("@error500"))).toBe(true);
  expect(models.some((id) => id.includes("@stream_cut"))).toBe(true);

  // A fixed seed: a failure can be replayed.
  let seed = 20261122;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const statuses = new Map<number, number>();

  const until = performance.now() + LOAD_MS;
  const lane = async () => {
    while (performance.now() < until) {
      const account = pick(accounts);
      const model = pick(models);
      const stream = random() < 0.5;
      const messages = [{ role: "user", content: `Say hello ${"x".repeat(Math.floor(random() * 300))}` }];
      const anthropicClient = random() < 0.3;
      const body: Record<string, unknown> = { model, stream, messages, max_tokens: 64 };
      if (random() < 0.3) body.models = [model, pick(models)];
      const abandonAfterMs = stream && random() < 0.2 ? random() * 30 : undefined;
      const controller = new AbortController();
      const timer = abandonAfterMs === undefined ? undefined : setTimeout(() => controller.abort(), abandonAfterMs);
      try {
        const response = await fetch(`${server.url}${anthropicClient ? "/v1/messages" : "/v1/chat/completions"}`, {
          method: "POST",
          headers: anthropicClient
            ? { "x-api-key": account.key, "anthropic-version": "2023-06-01", "content-type": "application/json" }
            : { authorization: `Bearer ${account.key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: controller.signal,
        });
        await response.text();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        account.responses++;
      } catch (error) {
        if (!controller.signal.aborted) throw error;
        account.abandoned++;
      } finally {
        clearTimeout(timer);
      }
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));

  server.process.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  expect(server.output()).not.toMatch(/"level":"(warn|error)"/);
  // The mix really happened: successes, refusals for want of funds, and upstream failures.
  for (const status of [200, 402, 502]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
  expect(accounts.reduce((sum, account) => sum + account.abandoned, 0)).toBeGreaterThan(0);

  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    for (const account of accounts) {
      const [books] = await sql<{ balance: string; reserved: string; ledger: string; leased: string; records: number }[]>`
        select w.balance_micro_usd::text as balance, w.reserved_micro_usd::text as reserved,
               (select coalesce(sum(amount_micro_usd), 0)::text from ledger_entries l where l.account_id = w.account_id) as ledger,
               (select coalesce(sum(amount_micro_usd), 0)::text from wallet_leases l where l.account_id = w.account_id) as leased,
               (select count(*)::int from requests r where r.account_id = w.account_id)
               -- A refusal past the account's sample of refusal records a minute is counted instead.
               + (select coalesce(sum(count), 0)::int from refused_request_counts c where c.account_id = w.account_id) as records
          from wallets w where w.account_id = ${account.id}`;
      expect({ balance: books!.balance, reserved: books!.reserved, leased: books!.leased }).toEqual({ balance: books!.ledger, reserved: "0", leased: "0" });
      expect(BigInt(books!.balance)).toBeGreaterThanOrEqual(0n);
      // A stream abandoned before the server saw it leaves no record; every other request has
      // one, or is counted (a refusal past the sample).
      expect(books!.records).toBeGreaterThanOrEqual(account.responses);
      expect(books!.records).toBeLessThanOrEqual(account.responses + account.abandoned);
    }
  } finally {
    await sql.end();
  }
}, 60_000);
