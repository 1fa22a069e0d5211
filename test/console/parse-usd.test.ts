import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/errors/api-error";
import { parseUsdToMicro } from "../../src/console/parse-usd";

const refusal = (text: string): string => {
  try {
    parseUsdToMicro(text, "The limit");
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) return error.message;
    throw error;
  }
  throw new Error(`${text} was accepted`);
};

describe("dollars typed into the console, to integer micro-USD", () => {
  test("are read exactly, digit by digit, up to the largest safe integer", () => {
    const cases: Array<[string, number]> = [
      ["12.345678", 12_345_678],
      ["0.000001", 1],
      ["5", 5_000_000],
      ["5.", 5_000_000],
      ["$ 1,250.5", 1_250_500_000],
      [" 0.10 ", 100_000],
      // Through a float this is 9007199254740992: one micro-dollar off, and past the safe range.
      ["9007199254.740991", Number.MAX_SAFE_INTEGER],
      ["007.000100", 7_000_100],
    ];
    for (const [text, micro] of cases) expect({ text, micro: parseUsdToMicro(text, "The limit") }).toEqual({ text, micro });
  });

  test("refuse more than six decimals, zero, negatives and anything that is not an amount", () => {
    expect(refusal("12.3456789")).toBe("The limit can have at most 6 decimal places (one micro-dollar).");
    expect(refusal("0.0000001")).toContain("at most 6 decimal places");
    for (const text of ["0", "0.000000", "$0"]) expect(refusal(text)).toBe("The limit must be more than $0.");
    for (const text of ["-1", "", "  ", "1e3", "0x10", "1.2.3", ".5", "Infinity", "NaN", "12 345", "１２"]) {
      expect(refusal(text)).toBe("The limit must be an amount in US dollars, such as 12.50.");
    }
    expect(refusal("9007199254.740992")).toBe("The limit is too large.");
  });
});
