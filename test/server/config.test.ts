import { describe, expect, test } from "bun:test";
import { loadConfig, meteringWriteConnections } from "../../src/config";
import { availableParallelism } from "node:os";

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

describe("metrics token", () => {
  test("METRICS_TOKEN is read as written; unset or empty leaves /metrics open", () => {
    expect(loadConfig({ METRICS_TOKEN: "scrape-secret" }).metricsToken).toBe("scrape-secret");
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_TOKEN: "" }).metricsToken).toBeUndefined();
  });
});

describe("shutdown delay", () => {
  test("5 s by default (a balancer checking every 1-2 s has moved away), SHUTDOWN_DELAY_MS to change it, 0 for none", () => {
    expect(loadConfig({}).shutdownDelayMs).toBe(5_000);
    expect(loadConfig({ SHUTDOWN_DELAY_MS: "1500" }).shutdownDelayMs).toBe(1_500);
    expect(loadConfig({ SHUTDOWN_DELAY_MS: "0" }).shutdownDelayMs).toBe(0);
    expect(() => loadConfig({ SHUTDOWN_DELAY_MS: "-1" })).toThrow("SHUTDOWN_DELAY_MS must be a non-negative integer");
    expect(() => loadConfig({ SHUTDOWN_DELAY_MS: "5s" })).toThrow("SHUTDOWN_DELAY_MS must be a non-negative integer");
  });
});

describe("server processes", () => {
  test("1 by default, a positive integer or auto (one per core), more than one only with DATABASE_URL and a fixed PORT", () => {
    const shared = { DATABASE_URL: "postgres://db.example.test/switchyard" };
    expect(loadConfig({}).serverProcesses).toBe(1);
    expect(loadConfig({ ...shared, SERVER_PROCESSES: "2" }).serverProcesses).toBe(2);
    expect(loadConfig({ ...shared, SERVER_PROCESSES: "auto" }).serverProcesses).toBe(availableParallelism());
    for (const bad of ["0", "-1", "abc", "1.5", " 2"]) {
      expect(() => loadConfig({ ...shared, SERVER_PROCESSES: bad })).toThrow(`SERVER_PROCESSES must be a positive integer or "auto", got "${bad}"`);
    }
    expect(() => loadConfig({ SERVER_PROCESSES: "2" })).toThrow("SERVER_PROCESSES=2 needs DATABASE_URL");
    expect(() => loadConfig({ ...shared, SERVER_PROCESSES: "2", PORT: "0" })).toThrow("SERVER_PROCESSES=2 needs a fixed PORT");
  });
});

describe("DATABASE_READ_URL", () => {
  test("unset by default; set, it needs DATABASE_URL (the embedded database has no replicas)", () => {
    const primary = "postgres://db.example.test/switchyard";
    const replica = "postgres://replica.example.test/switchyard";
    expect(loadConfig({}).databaseReadUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: primary }).databaseReadUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica }).databaseReadUrl).toBe(replica);
    expect(() => loadConfig({ DATABASE_READ_URL: replica })).toThrow("DATABASE_READ_URL is set but DATABASE_URL is not");
  });
});

describe("admission lease timing", () => {
  test("a dead instance's leases expire after 30 s and are swept every 5 s by default; both settable, the TTL covering two ticks", () => {
    expect(loadConfig({})).toMatchObject({ admissionLeaseTtlSecs: 30, admissionTickMs: 5_000 });
    expect(loadConfig({ ADMISSION_LEASE_TTL_SECS: "2", ADMISSION_TICK_MS: "250" })).toMatchObject({ admissionLeaseTtlSecs: 2, admissionTickMs: 250 });
    expect(() => loadConfig({ ADMISSION_TICK_MS: "0" })).toThrow("ADMISSION_TICK_MS must be a positive integer");
    expect(() => loadConfig({ ADMISSION_LEASE_TTL_SECS: "1", ADMISSION_TICK_MS: "600" })).toThrow("must be at least two ADMISSION_TICK_MS");
    expect(() => loadConfig({ ADMISSION_LEASE_TTL_SECS: "x" })).toThrow("ADMISSION_LEASE_TTL_SECS must be a non-negative integer");
  });
});
