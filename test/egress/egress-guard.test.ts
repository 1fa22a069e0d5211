import { afterAll, describe, expect, test } from "bun:test";
import { EgressGuard } from "../../src/egress/egress-guard";
import { parseAllowList } from "../../src/egress/allow-list";
import { callUpstream } from "../../src/routing/call-upstream";

/** A resolver whose successive answers for a name the test scripts (a rebinding DNS server). */
function scripted(answers: Record<string, string[][]>) {
  const calls: string[] = [];
  const resolve = async (hostname: string) => {
    calls.push(hostname);
    const queue = answers[hostname];
    if (!queue || queue.length === 0) throw new Error(`ENOTFOUND ${hostname}`);
    return queue.length > 1 ? queue.shift()! : queue[0]!;
  };
  return { resolve, calls };
}

describe("EgressGuard.destination", () => {
  test("pins the connection to the address it checked, keeping the name for Host and TLS", async () => {
    const dns = scripted({ "api.example.test": [["93.184.216.34", "2606:2800:220:1::1"]] });
    const guard = new EgressGuard(parseAllowList([]), dns.resolve);
    expect(await guard.destination("https://API.example.test:8443/v1/")).toEqual({
      ok: true,
      baseUrl: "https://93.184.216.34:8443/v1/",
      host: "api.example.test:8443",
      serverName: "api.example.test",
    });
    const v6 = new EgressGuard(parseAllowList([]), async () => ["2606:2800:220:1::1"]);
    expect(await v6.destination("https://api.example.test/v1")).toMatchObject({ ok: true, baseUrl: "https://[2606:2800:220:1::1]/v1", host: "api.example.test" });
  });

  test("a rebinding name: each request checks its own answer, and a non-public one is refused", async () => {
    const dns = scripted({ "rebind.example.test": [["93.184.216.34"], ["127.0.0.1"]] });
    const guard = new EgressGuard(parseAllowList([]), dns.resolve);
    expect(await guard.destination("https://rebind.example.test/v1")).toMatchObject({ ok: true, baseUrl: "https://93.184.216.34/v1" });
    expect(await guard.destination("https://rebind.example.test/v1")).toEqual({ ok: false, reason: "resolves to a non-public address: loopback (127.0.0.0/8)" });
    expect(dns.calls).toEqual(["rebind.example.test", "rebind.example.test"]);
  });

  test("one non-public address among public ones refuses the name; so does no answer, or a resolver that never answers", async () => {
    expect(await new EgressGuard(parseAllowList([]), async () => ["8.8.8.8", "fd00::1"]).destination("https://a.example.test/v1")).toMatchObject({ ok: false, reason: expect.stringMatching(/unique local/) });
    expect(await new EgressGuard(parseAllowList([]), async () => []).destination("https://a.example.test/v1")).toEqual({ ok: false, reason: "does not resolve" });
    expect(await new EgressGuard(parseAllowList([]), async () => Promise.reject(new Error("ENOTFOUND"))).destination("https://a.example.test/v1")).toEqual({ ok: false, reason: "does not resolve" });
    const hung = new EgressGuard(parseAllowList([]), () => new Promise(() => {}), 20);
    expect(await hung.destination("https://a.example.test/v1")).toEqual({ ok: false, reason: "does not resolve" });
  });

  test("applies the write-time rule again (a row stored before it), without resolving", async () => {
    const dns = scripted({});
    const guard = new EgressGuard(parseAllowList([]), dns.resolve);
    for (const base of ["http://127.0.0.1:8080/v1", "https://169.254.169.254/latest", "https://localhost/v1", "https://a.example.test/v1#"]) {
      expect(await guard.destination(base)).toMatchObject({ ok: false });
    }
    expect(await guard.destination("https://8.8.8.8/v1")).toEqual({ ok: true, baseUrl: "https://8.8.8.8/v1" });
    expect(dns.calls).toEqual([]);
  });

  test("BYOK_API_BASE_ALLOW: a host entry is trusted as named; a CIDR admits resolved addresses inside it only", async () => {
    const dns = scripted({ "llm.corp.test": [["10.1.2.3"]], "other.corp.test": [["10.2.0.1"]] });
    const guard = new EgressGuard(parseAllowList(["llm.internal:8080", "10.1.0.0/16"]), dns.resolve);
    expect(await guard.destination("http://llm.internal:8080/v1")).toEqual({ ok: true, baseUrl: "http://llm.internal:8080/v1" });
    expect(await guard.destination("https://llm.corp.test/v1")).toMatchObject({ ok: true, baseUrl: "https://10.1.2.3/v1", serverName: "llm.corp.test" });
    expect(await guard.destination("https://other.corp.test/v1")).toMatchObject({ ok: false, reason: expect.stringMatching(/private/) });
    expect(dns.calls).toEqual(["llm.corp.test", "other.corp.test"]);
  });
});

describe("callUpstream with a pinned host", () => {
  const seen: { host: string | null }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      seen.push({ host: request.headers.get("host") });
      return new Response("{}", { status: 200 });
    },
  });
  afterAll(() => server.stop(true));

  test("connects to the address and sends the name in Host", async () => {
    const target = { protocol: "openai-chat" as const, baseUrl: `http://127.0.0.1:${server.port}/v1`, providerModelId: "m", apiKey: "k" };
    const timeouts = { connectMs: 1000, firstByteMs: 2000, idleMs: 2000 };
    const call = await callUpstream({
      target,
      body: "{}",
      stream: false,
      clientHeaders: new Headers(),
      requestId: "req-1",
      timeouts,
      clientSignal: new AbortController().signal,
      pinned: { host: "api.example.test:8443", serverName: "api.example.test" },
    });
    expect(call.ok).toBe(true);
    if (call.ok) call.release();
    expect(seen.at(-1)).toEqual({ host: "api.example.test:8443" });
  });
});
