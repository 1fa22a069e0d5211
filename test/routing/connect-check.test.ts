import { describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { ConnectCheck, type Connector } from "../../src/routing/connect-check";

const never: Connector = () => new Promise(() => {});

describe("ConnectCheck", () => {
  test("an origin that does not accept a connection within the deadline is a retryable timeout", async () => {
    const check = new ConnectCheck(50, 30_000, never);
    const started = performance.now();
    const error = await check.check("https://api.example.test/v1/chat/completions");
    // The 50 ms deadline ends the wait, not a connect that never comes; room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error?.kind).toBe("upstream_timeout");
  });

  test("a refused connection is upstream_unavailable", async () => {
    const refusing: Connector = () => Promise.reject(new Error("ECONNREFUSED"));
    expect((await new ConnectCheck(1000, 30_000, refusing).check("http://127.0.0.1:9/x"))?.kind).toBe("upstream_unavailable");
  });

  test("a reachable origin is remembered, so the next call does not connect again", async () => {
    let connects = 0;
    const counting: Connector = async () => {
      connects++;
      return { close() {} };
    };
    let now = 0;
    const check = new ConnectCheck(1000, 30_000, counting, () => now);
    expect(check.isFresh("http://127.0.0.1:1234/a")).toBe(false);
    expect(await check.check("http://127.0.0.1:1234/a")).toBeUndefined();
    expect(check.isFresh("http://127.0.0.1:1234/other/path")).toBe(true);
    expect(check.isFresh("http://127.0.0.1:9999/a")).toBe(false);
    expect(await check.check("http://127.0.0.1:1234/b")).toBeUndefined();
    expect(connects).toBe(1);
    now = 31_000;
    expect(check.isFresh("http://127.0.0.1:1234/a")).toBe(false);
    await check.check("http://127.0.0.1:1234/c");
    expect(connects).toBe(2);
  });

  test("the real connector reaches a listening loopback port and reports a closed one", async () => {
    const server = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const check = new ConnectCheck(2000);
    expect(await check.check(`http://127.0.0.1:${port}/v1`)).toBeUndefined();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect((await new ConnectCheck(2000).check(`http://127.0.0.1:${port}/v1`))?.kind).toBe("upstream_unavailable");
  });
});
