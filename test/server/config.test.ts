import { describe, expect, test } from "bun:test";
import { loadConfig, meteringWriteConnections } from "../../src/config";

describe("metering write connections", () => {
  test("two on PostgreSQL by default, METERING_WRITE_CONNECTIONS to change it, never the whole pool, one on the embedded database", () => {
    const defaults = loadConfig({});
    expect(defaults.meteringWriteConnections).toBe(2);
    expect(meteringWriteConnections(defaults, "postgres")).toBe(2);
    expect(meteringWriteConnections(defaults, "embedded")).toBe(1);
    expect(meteringWriteConnections(loadConfig({ METERING_WRITE_CONNECTIONS: "4" }), "postgres")).toBe(4);
    // At most the pool size less one: something must be left for authentication and leases.
    expect(meteringWriteConnections(loadConfig({ METERING_WRITE_CONNECTIONS: "8", DATABASE_POOL_SIZE: "3" }), "postgres")).toBe(2);
    expect(meteringWriteConnections(loadConfig({ DATABASE_POOL_SIZE: "1" }), "postgres")).toBe(1);
    expect(meteringWriteConnections(loadConfig({ METERING_WRITE_CONNECTIONS: "0" }), "postgres")).toBe(1);
    expect(() => loadConfig({ METERING_WRITE_CONNECTIONS: "two" })).toThrow("METERING_WRITE_CONNECTIONS must be a non-negative integer");
  });
});

describe("stream stall timeout", () => {
  test("30 s by default, STREAM_STALL_TIMEOUT_MS to change it, 0 for none", () => {
    expect(loadConfig({}).streamStallTimeoutMs).toBe(30_000);
    expect(loadConfig({ STREAM_STALL_TIMEOUT_MS: "1000" }).streamStallTimeoutMs).toBe(1_000);
    expect(loadConfig({ STREAM_STALL_TIMEOUT_MS: "0" }).streamStallTimeoutMs).toBe(0);
    expect(() => loadConfig({ STREAM_STALL_TIMEOUT_MS: "-1" })).toThrow("STREAM_STALL_TIMEOUT_MS must be a non-negative integer");
  });
});
