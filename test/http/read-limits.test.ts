import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";
import { insertSyntheticRequests } from "../db/synthetic-requests";
import { heldUntilDone } from "../../src/console/requests-csv";
import { OneAtATime } from "../../src/public/one-at-a-time";
import { getPage, signedInUser } from "../support/console-session";

/**
 * The read pool's limits, seen from the API: a read PostgreSQL stops at the read statement
 * timeout is a 503 that says how to narrow it, and an account with all its concurrent reads
 * taken gets a 429 while another account reads on.
 */
let server: TestServer;
/** The same database behind a read statement timeout of 1 ms: any aggregate over tens of thousands of records runs longer. */
let strict: TestServer;
let owner: TestAccount;
let other: TestAccount;

const HISTORY_ROWS = 60_000;

beforeAll(async () => {
  server = await startTestServer({ accountConcurrentReads: 2 });
  strict = await startTestServer({ readStatementTimeoutMs: 1 }, { url: server.databaseUrl, drop: async () => {} });
  owner = await server.createAccount();
  other = await server.createAccount();
  const now = Date.now();
  await insertSyntheticRequests(server.server.services.db.sql, {
    count: HISTORY_ROWS,
    from: new Date(now - 20 * 86_400_000),
    to: new Date(now - 60_000),
    accounts: 1,
    namespaces: 1,
    idPrefix: "req_limits_",
    tenant: { accountId: owner.accountId, namespaceId: owner.namespaceId },
  });
  await server.server.services.db.sql`analyze requests`;
});

afterAll(async () => {
  await strict.close();
  await server.close();
});

describe("a read stopped by the read statement timeout", () => {
  test("is a 503 in the management shape that says the query took too long and how to narrow it, never a 500", async () => {
    for (const path of ["/v1/namespaces/me/usage", "/v1/usage", "/v1/namespaces/me/usage/daily?group_by=model"]) {
      const response = await strict.api("GET", path, { token: owner.apiKey });
      expect({ path, status: response.status }).toEqual({ path, status: 503 });
      expect(response.body.error).toBe("service_unavailable");
      expect(response.body.error_description).toContain("took too long");
      expect(response.body.error_description).toContain("shorter from/to range");
    }
  });

  test("leaves the primary pool alone: the same account's key list and settlement lookups still answer", async () => {
    expect((await strict.api("GET", "/v1/keys", { token: owner.apiKey })).status).toBe(200);
    expect((await strict.api("GET", "/v1/requests/q_1/settlement", { token: owner.apiKey })).status).toBe(200);
  });
});

describe("an account's concurrent reads", () => {
  test("past ACCOUNT_CONCURRENT_READS are a 429 with Retry-After in the management shape; another account and the account's cheap routes are not held up", async () => {
    const gate = server.server.services.accountReads;
    // Two reads of the owner's in flight: its slots are taken.
    const releases = [gate.enter(owner.accountId), gate.enter(owner.accountId)];
    try {
      for (const path of ["/v1/requests?limit=1", "/v1/namespaces/me/requests?limit=1", "/v1/namespaces/me/usage", "/v1/namespaces/me/usage/daily", "/v1/usage"]) {
        const refused = await server.api("GET", path, { token: owner.apiKey });
        expect({ path, status: refused.status }).toEqual({ path, status: 429 });
        expect(refused.headers.get("retry-after")).toBe("1");
        expect(refused.body.error).toBe("too_many_requests");
        expect(refused.body.error_description).toContain("at most 2");
      }
      expect((await server.api("GET", "/v1/requests?limit=1", { token: other.apiKey })).status).toBe(200);
      expect((await server.api("GET", "/v1/keys", { token: owner.apiKey })).status).toBe(200);
      expect((await server.api("GET", "/v1/namespaces/me/requests/req_limits_1", { token: owner.apiKey })).status).toBe(200);
    } finally {
      for (const release of releases) release();
    }
    // Released, the slots serve again, and a refused call took none.
    expect((await server.api("GET", "/v1/requests?limit=1", { token: owner.apiKey })).status).toBe(200);
  });

  test("a refusal for want of a credential or a malformed query takes no slot", async () => {
    const gate = server.server.services.accountReads;
    const release = gate.enter(owner.accountId);
    try {
      expect((await server.api("GET", "/v1/requests?streamed=yes", { token: owner.apiKey })).status).toBe(400);
      expect((await server.api("GET", "/v1/requests?limit=1", { token: owner.apiKey })).status).toBe(200);
    } finally {
      release();
    }
  });
});

describe("an account's concurrent reads on two server processes of one instance", () => {
  test("SERVER_PROCESSES divides ACCOUNT_CONCURRENT_READS among the processes: under 24 concurrent reads over both, never more than the limit in flight in all", async () => {
    const LIMIT = 4;
    const shared = { url: server.databaseUrl, drop: async () => {} };
    const processes = [
      await startTestServer({ accountConcurrentReads: LIMIT, serverProcesses: 2 }, shared),
      await startTestServer({ accountConcurrentReads: LIMIT, serverProcesses: 2 }, shared),
    ];
    try {
      expect(processes.map((p) => p.server.services.accountReads.limit)).toEqual([2, 2]);
      // Counts the owner's reads in flight on both processes together.
      let inFlight = 0;
      let most = 0;
      for (const p of processes) {
        const gate = p.server.services.accountReads;
        const enter = gate.enter.bind(gate);
        gate.enter = (accountId: string) => {
          const release = enter(accountId);
          if (accountId === owner.accountId) most = Math.max(most, ++inFlight);
          let released = false;
          return () => {
            if (!released && accountId === owner.accountId) inFlight--;
            released = true;
            release();
          };
        };
      }
      const statuses = await Promise.all(
        Array.from({ length: 24 }, (_, i) => processes[i % 2]!.api("GET", "/v1/namespaces/me/usage/daily?group_by=api_key", { token: owner.apiKey }).then((r) => r.status)),
      );
      for (const status of statuses) expect([200, 429]).toContain(status);
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(LIMIT);
    } finally {
      for (const p of processes) await p.close();
    }
  });
});

describe("what holds a slot or a connection, and for how long", () => {
  test("a CSV export gives its slot back when read to the end, when it fails, and when cancelled before its first page", async () => {
    let released = 0;
    const release = () => void released++;
    async function* pages(fail: boolean) {
      yield [1];
      if (fail) throw new Error("read failed");
    }
    const whole = heldUntilDone(pages(false), release);
    while (!(await whole.next()).done);
    expect(released).toBe(1);
    const failing = heldUntilDone(pages(true), release);
    await failing.next();
    await expect(failing.next()).rejects.toThrow("read failed");
    expect(released).toBe(2);
    // A generator's own `finally` never runs when it is returned before it started.
    const cancelled = heldUntilDone(pages(false), release);
    await cancelled.return!();
    expect(released).toBe(3);
  });

  test("public computations run one at a time, in order, and a failed one does not stop the next", async () => {
    const queue = new OneAtATime();
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const task = (n: number, fail = false) => async () => {
      most = Math.max(most, ++running);
      await Bun.sleep(5);
      running--;
      order.push(n);
      if (fail) throw new Error(`task ${n}`);
      return n;
    };
    const results = await Promise.allSettled([queue.run(task(1)), queue.run(task(2, true)), queue.run(task(3))]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(order).toEqual([1, 2, 3]);
    expect(most).toBe(1);
  });
});

describe("the console's reads count against the same cap", () => {
  test("with the account's slots taken the overview is a 429 page with Retry-After; an export holds a slot until its download is read to the end or cancelled", async () => {
    const user = await signedInUser(server);
    // Sixty pages of CSV: an export nobody reads is still open when the overview is asked for.
    const now = Date.now();
    await insertSyntheticRequests(server.server.services.db.sql, {
      count: 6_000,
      from: new Date(now - 86_400_000),
      to: new Date(now - 60_000),
      accounts: 1,
      namespaces: 1,
      idPrefix: "req_export_",
      tenant: { accountId: user.accountId, namespaceId: user.namespaceId },
    });
    const gate = server.server.services.accountReads;
    const releases = [gate.enter(user.accountId), gate.enter(user.accountId)];
    const refused = await getPage(server, user, "/console");
    expect(refused.status).toBe(429);
    expect(refused.response.headers.get("retry-after")).toBe("1");
    expect(refused.text).toContain("Too many pages at once");
    releases.pop()!();
    expect((await getPage(server, user, "/console")).status).toBe(200);

    // One slot free: an export takes it while its body is unread, so the overview waits its turn.
    const exporting = await fetch(`${server.url}/console/requests.csv`, { headers: { cookie: user.cookie } });
    expect(exporting.status).toBe(200);
    expect((await getPage(server, user, "/console")).status).toBe(429);
    await exporting.text();
    expect((await getPage(server, user, "/console")).status).toBe(200);

    // A download the client abandons gives its slot back too.
    const abandoned = await fetch(`${server.url}/console/requests.csv`, { headers: { cookie: user.cookie } });
    await abandoned.body!.cancel();
    let status = 429;
    for (let i = 0; i < 50 && status === 429; i++) {
      await Bun.sleep(20);
      status = (await getPage(server, user, "/console")).status;
    }
    expect(status).toBe(200);
    releases.pop()!();
  });
});
