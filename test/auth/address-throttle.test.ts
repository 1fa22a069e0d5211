import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { addressKey, SIGN_IN_PER_ADDRESS, USER_CODE_PER_ADDRESS } from "../../src/auth/auth-throttle";
import { signIn } from "../../src/management/sessions/session-service";
import { ApiError } from "../../src/errors/api-error";
import { startTestServer, type TestAccount, type TestServer } from "../support/test-server";

/**
 * The per-address throttles count an IPv6 client by its /64: a host picks a new address
 * inside its allocation at will, so counting each address apart would give every guess a
 * fresh counter. IPv4 counts per address as before, and an IPv4-mapped IPv6 address is the
 * IPv4 address it maps.
 */
let server: TestServer;
let account: TestAccount;
beforeAll(async () => {
  // One proxy in front: the client address is the last X-Forwarded-For entry.
  server = await startTestServer({ trustedProxyHops: 1 });
  account = await server.createAccount();
});
afterAll(() => server.close());
beforeEach(async () => {
  await server.server.services.db.sql`delete from auth_throttle`;
});

let guess = 0;
/** An unknown user code entered from `address` (through the proxy): 400 while open, 429 once locked. */
async function guessFrom(address: string): Promise<number> {
  const letters = "BCDFGHJKLMNPQRSTVWXZ";
  const n = guess++;
  const code = `BBBB-${letters[n % 20]}${letters[Math.floor(n / 20) % 20]}${letters[Math.floor(n / 400) % 20]}B`;
  const response = await server.api("POST", "/oauth/device/decision", {
    token: account.apiKey,
    headers: { "x-forwarded-for": address },
    body: { user_code: code, namespace_id: account.namespaceId, approve: true },
  });
  return response.status;
}

describe("the subject an address counts under", () => {
  test("every spelling of an address inside one /64 is one subject; the next /64 is another", () => {
    const subject = (address: string) => addressKey(SIGN_IN_PER_ADDRESS, address).subject;
    const inside = [
      "2001:db8:1:2::1",
      "2001:db8:1:2::",
      "2001:db8:1:2:0:0:0:9",
      "2001:0db8:0001:0002:0000:0000:0000:000a",
      "2001:DB8:1:2:FFFF:FFFF:FFFF:FFFF",
      "2001:db8:1:2:abcd::ef",
      "[2001:db8:1:2::7]",
      "2001:db8:1:2::8%eth0",
      "2001:db8:1:2:1:2:192.0.2.1",
    ];
    for (const address of inside) expect({ address, subject: subject(address) }).toEqual({ address, subject: "2001:db8:1:2::/64" });
    expect(subject("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(subject("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(subject("2001:db8::1:0:0:1")).toBe("2001:db8:0:0::/64");
    expect(subject("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64");
    expect(subject("::1")).toBe("0:0:0:0::/64");
    expect(subject("::")).toBe("0:0:0:0::/64");
    expect(subject("1::")).toBe("1:0:0:0::/64");
    expect(subject("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });

  test("IPv4 is unchanged and an IPv4-mapped IPv6 address counts as its IPv4 address", () => {
    const subject = (address: string) => addressKey(USER_CODE_PER_ADDRESS, address).subject;
    expect(subject("198.51.100.7")).toBe("198.51.100.7");
    expect(subject("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(subject("::FFFF:c633:6407")).toBe("198.51.100.7");
    expect(subject("0:0:0:0:0:ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(subject("[::ffff:198.51.100.7]")).toBe("198.51.100.7");
    // Not an address: counted as written (one shared counter for in-process calls).
    expect(subject("unknown")).toBe("unknown");
    expect(subject("not:an:address")).toBe("not:an:address");
  });
});

describe("per-address throttles", () => {
  test("user-code guesses from ten addresses of one /64 lock the whole /64, and only it", async () => {
    for (let i = 1; i <= USER_CODE_PER_ADDRESS.maxFailures; i++) {
      expect(await guessFrom(`2001:db8:aa:bb::${i.toString(16)}`)).toBe(400);
    }
    expect(await guessFrom("2001:db8:aa:bb:ffff:ffff:ffff:fffe")).toBe(429);
    expect(await guessFrom("2001:0db8:00aa:00bb:1234:5678:9abc:def0")).toBe(429);
    expect(await guessFrom("2001:db8:aa:bc::1")).toBe(400);
    expect(await guessFrom("2001:db8:aa::1")).toBe(400);
  });

  test("IPv4 and its mapped IPv6 form share one counter; the next IPv4 address has its own", async () => {
    for (let i = 0; i < USER_CODE_PER_ADDRESS.maxFailures; i++) {
      expect(await guessFrom(i % 2 === 0 ? "198.51.100.7" : "::ffff:198.51.100.7")).toBe(400);
    }
    expect(await guessFrom("198.51.100.7")).toBe(429);
    expect(await guessFrom("::ffff:198.51.100.7")).toBe(429);
    expect(await guessFrom("198.51.100.8")).toBe(400);
  });

  test("wrong passwords from thirty addresses of one /64 lock sign-in for the /64, and not for another", async () => {
    const deps = { db: server.server.services.db, throttle: server.server.services.throttle, verify: async () => false };
    const attempt = async (n: number, address: string) => {
      try {
        return (await signIn(deps, `rotating-${n}@example.test`, "a wrong password", address)).ok ? "signed in" : "refused";
      } catch (error) {
        if (error instanceof ApiError) return error.status;
        throw error;
      }
    };
    for (let i = 1; i <= SIGN_IN_PER_ADDRESS.maxFailures; i++) {
      expect(await attempt(i, `2001:db8:cafe:1:${i.toString(16)}::${(i * 7).toString(16)}`)).toBe("refused");
    }
    expect(await attempt(100, "2001:db8:cafe:1::ffff")).toBe(429);
    expect(await attempt(101, "2001:db8:cafe:2::1")).toBe("refused");
  });
});
