import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from "../support/test-server";
import { createAccountWithPassword, setCookies, signInOverHttp } from "../support/console-http";
import { verifyPassword } from "../../src/auth/passwords";
import { ConsoleSessions } from "../../src/console/console-sessions";
import { signIn } from "../../src/management/sessions/session-service";

/** A password change ends the account's sessions; no session outlives its absolute cap. */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const PASSWORD = "correct horse battery staple";
const signedIn = async (session: string) => (await (await fetch(`${server.url}/console`, { headers: { cookie: session } })).text()).includes("<h1>Sign in</h1>") === false;

test("an operator password reset ends every console session of the account, and only of that account", async () => {
  const account = await createAccountWithPassword(server, PASSWORD);
  const bystander = await createAccountWithPassword(server, PASSWORD);
  const first = (await signInOverHttp(server, account.email, PASSWORD)).session!;
  const second = (await signInOverHttp(server, account.email, PASSWORD)).session!;
  const other = (await signInOverHttp(server, bystander.email, PASSWORD)).session!;
  expect(await signedIn(first)).toBe(true);
  expect(await signedIn(second)).toBe(true);
  const reset = await server.api("PUT", `/admin/accounts/${account.accountId}/password`, { token: TEST_ADMIN_TOKEN, body: { password: "a brand new passphrase" } });
  expect(reset.status).toBe(200);
  expect(await signedIn(first)).toBe(false);
  expect(await signedIn(second)).toBe(false);
  expect(await signedIn(other)).toBe(true);
  const [row] = await server.server.services.db.sql<{ count: number }[]>`select count(*)::int as count from console_sessions where account_id = ${account.accountId}`;
  expect(row!.count).toBe(0);
  expect((await signInOverHttp(server, account.email, PASSWORD)).response.status).toBe(401);
  expect((await signInOverHttp(server, account.email, "a brand new passphrase")).response.status).toBe(303);
});

test("a session in use ends 7 days after its sign-in; its sliding expiry never passes that", async () => {
  const account = await createAccountWithPassword(server, PASSWORD);
  const sql = server.server.services.db.sql;
  const { session } = await signInOverHttp(server, account.email, PASSWORD);
  // An hour before the cap, a use slides the expiry only up to the cap.
  await sql`update console_sessions set created_at = now() - interval '7 days' + interval '1 hour', last_seen_at = now() - interval '6 minutes' where account_id = ${account.accountId}`;
  const used = await fetch(`${server.url}/console`, { headers: { cookie: session! } });
  expect(await used.text()).toContain(account.email);
  const maxAge = Number(/Max-Age=(\d+)/.exec(setCookies(used).find((cookie) => cookie.startsWith("switchyard_session="))!)![1]);
  expect(maxAge).toBeLessThanOrEqual(3600);
  expect(maxAge).toBeGreaterThan(3500);
  const [row] = await sql<{ over: boolean }[]>`select expires_at > created_at + interval '7 days' as over from console_sessions where account_id = ${account.accountId}`;
  expect(row!.over).toBe(false);
  // Past the cap, however its expiry was moved, the session is gone.
  await sql`update console_sessions set created_at = now() - interval '7 days' - interval '1 second', expires_at = now() + interval '12 hours' where account_id = ${account.accountId}`;
  expect(await signedIn(session!)).toBe(false);
});

test("the cap comes from Config: a shortened one bounds the cookie of a fresh session", async () => {
  const short = await startTestServer({ consoleSessionMaxAgeMs: 60_000 }, { url: server.databaseUrl, drop: async () => {} });
  try {
    const account = await createAccountWithPassword(short, PASSWORD);
    const { response, session } = await signInOverHttp(short, account.email, PASSWORD);
    expect(setCookies(response).find((cookie) => cookie.startsWith("switchyard_session="))).toMatch(/Max-Age=60(;|$)/);
    const [row] = await short.server.services.db.sql<{ secs: number }[]>`select extract(epoch from expires_at - created_at) as secs from console_sessions where account_id = ${account.accountId}`;
    expect(Number(row!.secs)).toBeLessThanOrEqual(61);
    expect((await (await fetch(`${short.url}/console`, { headers: { cookie: session! } })).text())).toContain(account.email);
  } finally {
    await short.close();
  }
});

test("a sign-in whose old password was verified just before a reset gets no session", async () => {
  const account = await createAccountWithPassword(server, PASSWORD);
  const services = server.server.services;
  // The old password is verified, then the sign-in stalls until the reset is done.
  let verified!: () => void;
  const wasVerified = new Promise<void>((resolve) => (verified = resolve));
  let resume!: () => void;
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  const verify: typeof verifyPassword = async (password, hash) => {
    const matches = await verifyPassword(password, hash);
    verified();
    await resumed;
    return matches;
  };
  const signingIn = signIn({ db: services.db, throttle: services.throttle, verify }, account.email, PASSWORD, "198.51.100.20");
  await wasVerified;
  const reset = await server.api("PUT", `/admin/accounts/${account.accountId}/password`, { token: TEST_ADMIN_TOKEN, body: { password: "the operator's new one" } });
  expect(reset.status).toBe(200);
  resume();
  const outcome = await signingIn;
  expect(outcome.ok).toBe(true);
  if (!outcome.ok) return;
  const sessions = new ConsoleSessions(services, false, services.config.consoleSessionMaxAgeMs);
  expect(await sessions.create(outcome.accountId, outcome.passwordHash)).toBeUndefined();
  const [row] = await services.db.sql<{ count: number }[]>`select count(*)::int as count from console_sessions where account_id = ${account.accountId}`;
  expect(row!.count).toBe(0);
}, 30_000);
