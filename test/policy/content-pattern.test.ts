import { describe, expect, test } from "bun:test";
import { compileContentPattern, contentPatternProblem, MAX_PATTERN_LENGTH } from "../../src/policy/content-pattern";

describe("content patterns", () => {
  test("accepts the patterns guardrails are written with", () => {
    for (const pattern of [
      "AKIA[0-9A-Z]{16}",
      "sk-[A-Za-z0-9_-]{20,}",
      "\\b\\d{3}-\\d{2}-\\d{4}\\b",
      "(?i)password",
      "(?i:api[_-]?key)\\s*[:=]",
      "(?:\\d{4}[ -]?){3}\\d{4}",
      "(?:secret|token){1,3}",
      "-----BEGIN [A-Z ]+PRIVATE KEY-----",
      "[^\\s@]+@[^\\s@]+\\.[a-z]{2,}",
      "\\p{Lu}{5}",
      "a|b",
      "[\\]a]+x",
    ]) {
      expect({ pattern, problem: contentPatternProblem(pattern) }).toEqual({ pattern, problem: undefined });
    }
  });

  test("refuses patterns that can backtrack catastrophically, with the reason", () => {
    for (const pattern of ["(a+)+$", "(a*)*b", "(\\w+\\s?)*$", "(a|aa)*c", "(x|xy)+z", "((ab)*c)+", "(?:a?){20}a{20}", "(\\d+){10}"]) {
      expect({ pattern, problem: contentPatternProblem(pattern) }).toEqual({ pattern, problem: expect.stringContaining("catastrophic backtracking") });
    }
  });

  test("refuses backreferences, lookaround, huge counts, empty matches, bad syntax and long patterns", () => {
    expect(contentPatternProblem("(a)\\1")).toContain("backreferences");
    expect(contentPatternProblem("(?<q>a)\\k<q>")).toContain("backreferences");
    expect(contentPatternProblem("foo(?=bar)")).toContain("lookahead");
    expect(contentPatternProblem("(?<!x)foo")).toContain("lookahead");
    expect(contentPatternProblem("a{2000}")).toContain("1000");
    expect(contentPatternProblem("a?")).toContain("empty string");
    expect(contentPatternProblem("(?:)")).toContain("empty string");
    expect(contentPatternProblem("a(b")).toContain("not a valid regular expression");
    expect(contentPatternProblem("")).toContain("empty");
    expect(contentPatternProblem("a".repeat(MAX_PATTERN_LENGTH))).toBeUndefined();
    expect(contentPatternProblem("a".repeat(MAX_PATTERN_LENGTH + 1))).toContain(String(MAX_PATTERN_LENGTH));
  });

  test("accepted patterns finish on the input that makes nested repetition run for ages", () => {
    // (a+)+$ takes 2^n steps on n a's and a "!"; these take at most n² (one unbounded
    // repetition that fails at the end, retried from every start) — the residual cost the
    // README names, bounded by how much text one scan is given.
    const hostile = "a".repeat(5_000) + "!";
    for (const pattern of ["a+$", "(?:ab|cd){1,8}x", "[a-z]+@", "(?:\\d{3}-){2}\\d{4}"]) {
      expect(contentPatternProblem(pattern)).toBeUndefined();
      // An exponential pattern would never return here, and the test runner's timeout fails the
      // test; a quadratic one returns in milliseconds. No clock: the verdict, not the speed.
      expect(hostile.replace(compileContentPattern(pattern), "[REDACTED]")).toBe(hostile);
    }
  });

  test("compiles global and Unicode-aware; a leading (?i) makes it case-insensitive", () => {
    const plain = compileContentPattern("secret");
    expect(plain.flags).toBe("gu");
    expect("SECRET secret".replace(plain, "[REDACTED]")).toBe("SECRET [REDACTED]");
    const folded = compileContentPattern("(?i)secret");
    expect(folded.flags).toBe("giu");
    expect("SECRET secret".replace(folded, "[REDACTED]")).toBe("[REDACTED] [REDACTED]");
  });
});
