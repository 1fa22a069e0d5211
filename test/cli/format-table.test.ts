import { describe, expect, test } from "bun:test";
import { formatMicroUsd, formatTable, formatTimestamp } from "../../src/cli/switchyard/format-table";

describe("formatMicroUsd", () => {
  test("keeps every significant micro-dollar and at least cents", () => {
    expect(formatMicroUsd(0)).toBe("$0.00");
    expect(formatMicroUsd(1)).toBe("$0.000001");
    expect(formatMicroUsd(1234)).toBe("$0.001234");
    expect(formatMicroUsd(1_500_000)).toBe("$1.50");
    expect(formatMicroUsd(5_250_010)).toBe("$5.25001");
    expect(formatMicroUsd(1_234_567_890_123)).toBe("$1,234,567.890123");
    expect(formatMicroUsd(-250_000)).toBe("-$0.25");
  });

  test("an unknown amount is a dash, never $0.00", () => {
    expect(formatMicroUsd(null)).toBe("-");
    expect(formatMicroUsd(undefined)).toBe("-");
  });
});

describe("formatTable", () => {
  test("aligns columns on the widest cell, right-aligns the numeric ones, and shows missing cells as -", () => {
    const table = formatTable(["id", "name", "tokens"], [["k_1", "short", 5], ["k_22", null, 12345]], new Set([2]));
    expect(table).toBe(["ID    NAME   TOKENS", "k_1   short       5", "k_22  -       12345"].join("\n"));
  });
});

test("formatTimestamp shows UTC to the second", () => {
  expect(formatTimestamp("2026-11-23T23:41:07.123+01:00")).toBe("2026-11-23 22:41:07Z");
  expect(formatTimestamp(null)).toBe("-");
});
