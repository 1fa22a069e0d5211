import { badRequest } from "../errors/api-error";

const AMOUNT = /^(\d+)(?:\.(\d*))?$/;

/**
 * A dollar amount as typed ("12.345678", "$5", "0.5") to integer micro-USD, exactly: the
 * digits are read as a decimal string and never pass through a float, so "0.1" is
 * 100000 and not 100000.00000000001 of anything. More than six decimals (below a
 * micro-dollar), zero, negative amounts and anything that is not a plain number are refused.
 */
export function parseUsdToMicro(text: string, label: string): number {
  const trimmed = text.trim().replace(/^\$\s*/, "").replace(/,/g, "");
  const match = AMOUNT.exec(trimmed);
  if (!match) throw badRequest(`${label} must be an amount in US dollars, such as 12.50.`);
  const whole = match[1]!;
  const fraction = match[2] ?? "";
  if (fraction.length > 6) throw badRequest(`${label} can have at most 6 decimal places (one micro-dollar).`);
  const micro = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, "0"));
  if (micro <= 0n) throw badRequest(`${label} must be more than $0.`);
  if (micro > BigInt(Number.MAX_SAFE_INTEGER)) throw badRequest(`${label} is too large.`);
  return Number(micro);
}

