import { describe, expect, test } from "bun:test";
import { extractCredential } from "../../src/auth/extract-credential";

const headers = (entries: Record<string, string>) => new Headers(entries);

describe("extractCredential", () => {
  test("the Bearer scheme is optional and matched in any case, with any run of spaces after it", () => {
    expect(extractCredential(headers({ authorization: "Bearer brk_a.b" }))).toBe("brk_a.b");
    expect(extractCredential(headers({ authorization: "bearer   brk_a.b" }))).toBe("brk_a.b");
    expect(extractCredential(headers({ authorization: "BEARER\tbrk_a.b " }))).toBe("brk_a.b");
    expect(extractCredential(headers({ authorization: "brk_a.b" }))).toBe("brk_a.b");
  });

  test("the scheme alone is no credential (the runtime trims `Bearer ` to `Bearer`), and a word that only starts like it keeps its start", () => {
    expect(extractCredential(headers({ authorization: "Bearer " }))).toBeUndefined();
    expect(extractCredential(headers({ authorization: "Bearerbrk_a.b" }))).toBe("Bearerbrk_a.b");
  });

  test("Authorization first, then x-api-key, then x-goog-api-key; blank values are skipped", () => {
    expect(extractCredential(headers({ authorization: "Bearer one", "x-api-key": "two", "x-goog-api-key": "three" }))).toBe("one");
    expect(extractCredential(headers({ authorization: "Bearer  ", "x-api-key": "two", "x-goog-api-key": "three" }))).toBe("two");
    expect(extractCredential(headers({ "x-api-key": " ", "x-goog-api-key": "three" }))).toBe("three");
    expect(extractCredential(headers({}))).toBeUndefined();
  });

  test("the same answer on every call (the pattern is one object shared by all calls)", () => {
    for (let i = 0; i < 3; i++) expect(extractCredential(headers({ authorization: "bearer x" }))).toBe("x");
  });
});
