import { describe, expect, test } from "bun:test";
import { installConnectionLossGuard, isDatabaseConnectionLoss } from "../../src/db/connection-loss-guard";

function coded(code: string, name = "Error", message = code, syscall?: string): Error {
  const error = new Error(message) as Error & { code: string; syscall?: string };
  error.name = name;
  error.code = code;
  if (syscall !== undefined) error.syscall = syscall;
  return error;
}

describe("database connection loss", () => {
  test("socket and driver connection errors, and PostgreSQL's classes 08 and 57, are connection loss; data and query errors are not", () => {
    for (const code of ["CONNECTION_CLOSED", "CONNECTION_ENDED", "CONNECTION_DESTROYED", "CONNECT_TIMEOUT"]) expect(isDatabaseConnectionLoss(coded(code))).toBe(true);
    for (const code of ["ECONNRESET", "EPIPE"]) expect(isDatabaseConnectionLoss(coded(code, "Error", `read ${code}`, "read"))).toBe(true);
    // An upstream fetch fails with the same code but no syscall: that is not the database.
    expect(isDatabaseConnectionLoss(Object.assign(new TypeError("ECONNRESET: The socket connection was closed unexpectedly"), { code: "ECONNRESET" }))).toBe(false);
    expect(isDatabaseConnectionLoss(coded("57P01", "PostgresError", "terminating connection due to administrator command"))).toBe(true);
    expect(isDatabaseConnectionLoss(coded("08006", "PostgresError"))).toBe(true);
    expect(isDatabaseConnectionLoss(coded("23505", "PostgresError", "duplicate key value"))).toBe(false);
    // Refused at start-up: PostgreSQL sends FATAL and closes the connection.
    const refused = Object.assign(coded("55000", "PostgresError", 'database "t" is not currently accepting connections'), { severity: "FATAL" });
    expect(isDatabaseConnectionLoss(refused)).toBe(true);
    expect(isDatabaseConnectionLoss(Object.assign(coded("55000", "PostgresError", "object not in prerequisite state"), { severity: "ERROR" }))).toBe(false);
    expect(isDatabaseConnectionLoss(coded("57014", "PostgresError", "canceling statement due to statement timeout"))).toBe(false);
    expect(isDatabaseConnectionLoss(coded("57P01"))).toBe(false); // a SQLSTATE on something that is not a PostgresError
    expect(isDatabaseConnectionLoss(new Error("boom"))).toBe(false);
    expect(isDatabaseConnectionLoss("ECONNRESET")).toBe(false);
    expect(isDatabaseConnectionLoss(undefined)).toBe(false);
  });

  test("the driver's write to a dropped socket is recognised by where it comes from, not by its message alone", () => {
    const fromDriver = new TypeError("null is not an object (evaluating 'socket.write')");
    fromDriver.stack = `${fromDriver.message}\n    at nextWrite (/app/node_modules/postgres/src/connection.js:255:15)`;
    expect(isDatabaseConnectionLoss(fromDriver)).toBe(true);
    const ours = new TypeError("null is not an object (evaluating 'socket.write')");
    ours.stack = `${ours.message}\n    at relay (/app/src/inference/relay-stream.ts:10:1)`;
    expect(isDatabaseConnectionLoss(ours)).toBe(false);
  });

  test("the guard drops connection loss and exits with status 1 on anything else, for exceptions and rejections alike", () => {
    const listeners = () => process.listeners("uncaughtException").length + process.listeners("unhandledRejection").length;
    const before = listeners();
    const exits: number[] = [];
    const uninstall = installConnectionLossGuard((code) => exits.push(code));
    try {
      process.emit("uncaughtException", coded("ECONNRESET", "Error", "write ECONNRESET", "write"));
      process.emit("unhandledRejection", coded("57P01", "PostgresError"), Promise.resolve());
      expect(exits).toEqual([]);
      process.emit("uncaughtException", new Error("a real bug"));
      process.emit("unhandledRejection", new RangeError("another"), Promise.resolve());
      expect(exits).toEqual([1, 1]);
    } finally {
      uninstall();
    }
    expect(listeners()).toBe(before);
  });
});
