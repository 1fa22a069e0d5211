import { randomInt } from "node:crypto";

/**
 * The user-code alphabet of RFC 8628 §6.1: twenty consonants, no vowels (no words) and
 * none of the letters easily mistaken for a digit. 20^8 ≈ 2.6 · 10^10 codes.
 */
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const LENGTH = 8;

/** A fresh user code as shown: `XXXX-XXXX`. */
export function newUserCode(): string {
  let code = "";
  for (let i = 0; i < LENGTH; i++) {
    if (i === LENGTH / 2) code += "-";
    code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  }
  return code;
}

const SHAPE = new RegExp(`^[${USER_CODE_ALPHABET}]{${LENGTH}}$`);

/**
 * A typed user code in its stored form `XXXX-XXXX`, whatever the case and with or
 * without the dash or spaces; undefined when it cannot be a user code at all.
 */
export function normalizeUserCode(typed: string): string | undefined {
  if (typed.length > 64) return undefined;
  const letters = typed.toUpperCase().replace(/[\s-]/g, "");
  if (!SHAPE.test(letters)) return undefined;
  return `${letters.slice(0, LENGTH / 2)}-${letters.slice(LENGTH / 2)}`;
}
