import { badRequest } from "../../errors/api-error";

/**
 * Letters from other scripts that look like the Latin ones of "switchyard", and digits
 * written for them, folded before the name is compared. Enough to catch a deliberate
 * look-alike of the built-in client's name; not a full confusables table.
 */
const LOOK_ALIKES: Record<string, string> = {
  // Cyrillic
  а: "a", с: "c", ԁ: "d", һ: "h", і: "i", ї: "i", ј: "j", о: "o", р: "p", ѕ: "s", т: "t", у: "y", ү: "y", х: "x", ԝ: "w", ш: "w", г: "r",
  // Greek
  α: "a", ι: "i", ο: "o", τ: "t", υ: "y", γ: "y", ω: "w", ρ: "p", χ: "x", η: "h",
  // Latin variants NFKD keeps apart
  ı: "i", ɩ: "i", ʏ: "y", ʜ: "h", ᴅ: "d", ᴄ: "c", ᴛ: "t", ᴡ: "w", ʀ: "r", ꜱ: "s", ɑ: "a", ɗ: "d",
  // Digits and signs standing in for letters
  "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "|": "i", "!": "i", "$": "s", "@": "a",
};

/** The reserved word, compared after folding. */
const RESERVED = "switchyard";

/**
 * The name as compared: compatibility-decomposed (full-width and styled letters become
 * plain ones), accents dropped, lower-cased, look-alikes folded, and everything but
 * letters and digits removed (spaces of any kind, dots, dashes, zero-width characters).
 */
export function foldClientName(name: string): string {
  const decomposed = name.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  const folded = [...decomposed].map((char) => LOOK_ALIKES[char] ?? char).join("");
  return folded.replace(/[^\p{L}\p{N}]/gu, "").replace(/l/g, "i");
}

/**
 * Refuses a client name that imitates the built-in client's ("Switchyard CLI"): any name
 * that, folded, contains "switchyard". The device and consent pages also mark the
 * built-in client as first-party, but a look-alike name must not even be registered.
 */
export function checkClientName(name: string): string {
  if (foldClientName(name).includes(RESERVED)) {
    throw badRequest("client_name must not contain \"Switchyard\" or a look-alike: that name is reserved for the service's own clients");
  }
  return name;
}
