import { describe, expect, test } from "bun:test";
import { MAX_MATCH_CHARS, scanPatterns, WINDOW_CHARS } from "../../src/admission/content-scanner";
import { REDACTED, redactText, StreamRedactor } from "../../src/admission/redact-stream";
import type { ContentPatternSpec } from "../../src/policy/policy-spec";
import { splitAtRandom } from "../support/split-chunks";
import { bound, effective } from "./admission-support";

function patterns(...specs: ContentPatternSpec[]) {
  const guardrail = effective(bound("pol_resp", "guardrail", { content_patterns: specs })).guardrail;
  return scanPatterns(guardrail!.contentPatterns);
}

function streamed(scan: ReturnType<typeof patterns>, chunks: readonly string[]) {
  const redactor = new StreamRedactor(scan);
  let out = "";
  for (const chunk of chunks) {
    const step = redactor.push(chunk);
    out += step.text;
    if (step.refusal) return { text: out, refusal: step.refusal };
  }
  const last = redactor.end();
  return { text: out + last.text, refusal: last.refusal };
}

/** xorshift32, so a failing case can be replayed from its seed. */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

const FRAGMENTS = [
  "the key is sk-Abc123XYZ789 ok", "call 555-0123 now", "Password: hunter2", "mail bob@example.com",
  "monkey key keys", " ", "\n", "lorem ipsum dolor sit amet ", "ssk-", "sk-", "55", "-01", "PASSWORD", "😀 émoji ",
  "a".repeat(300), "secret", "x@y.com", "sk-" + "Z".repeat(40),
];

function randomText(next: () => number, pieces: number): string {
  let text = "";
  for (let i = 0; i < pieces; i++) text += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)]!;
  return text;
}

describe("response-side redaction", () => {
  const mixed = patterns(
    { name: "api key", pattern: "sk-[A-Za-z0-9]{8,}", action: "redact" },
    { name: "phone", pattern: "\\d{3}-\\d{4}", action: "redact" },
    { name: "password", pattern: "(?i)password", action: "redact" },
    { name: "email", pattern: "[a-z]+@[a-z]+\\.com", action: "redact" },
    { name: "key word", pattern: "\\bkey\\b", action: "redact" },
    { name: "runs", pattern: "(?:aa|bb)a", action: "redact" },
  );

  const bounded = patterns(
    { name: "api key", pattern: "sk-[A-Za-z0-9]{8}", action: "redact" },
    { name: "phone", pattern: "\\d{3}-\\d{4}", action: "redact" },
    { name: "password", pattern: "(?i)password", action: "redact" },
    { name: "key word", pattern: "\\bkey\\b", action: "redact" },
    { name: "runs", pattern: "(?:aa|bb)a", action: "redact" },
  );

  for (const [name, set] of [["unbounded", mixed], ["bounded", bounded]] as const) {
    test(`a stream cut at random boundaries redacts exactly what the whole text does (${name} patterns)`, () => {
      expect(set.boundedLength === null).toBe(name === "unbounded");
      let redactions = 0;
      for (let seed = 1; seed <= 300; seed++) {
        const next = random(seed);
        const text = randomText(next, 5 + Math.floor(next() * 40));
        const whole = redactText(set, text);
        redactions += whole.text.split(REDACTED).length - 1;
        for (const chunkSeed of [seed, seed * 7 + 1, seed * 13 + 5]) {
          const chunks = splitAtRandom(text, chunkSeed, 1 + Math.floor(next() * text.length));
          expect(streamed(set, chunks)).toEqual({ text: whole.text, refusal: undefined });
        }
        // One character at a time, the hardest split.
        expect(streamed(set, [...text]).text).toBe(whole.text);
      }
      expect(redactions).toBeGreaterThan(1_000);
    });
  }

  test("bounded patterns redact the whole text as regular leftmost matching does", () => {
    for (let seed = 1; seed <= 100; seed++) {
      const text = randomText(random(seed), 30);
      for (const [pattern, regex] of [["sk-[A-Za-z0-9]{8}", /sk-[A-Za-z0-9]{8}/gu], ["\\d{3}-\\d{4}", /\d{3}-\d{4}/gu], ["(?:aa|bb)a", /(?:aa|bb)a/gu]] as const) {
        const single = patterns({ name: "one", pattern, action: "redact" });
        expect(redactText(single, text).text).toBe(text.replace(regex, REDACTED));
      }
    }
  });

  test("bounded matches are redacted as String.replace would, a match split across chunks included", () => {
    const keys = patterns({ name: "key", pattern: "sk-[a-z0-9]{8}", action: "redact" });
    const text = "a sk-abcd1234 b sk-zz c sk-00000000sk-11111111 d";
    const expected = text.replace(/sk-[a-z0-9]{8}/g, REDACTED);
    expect(redactText(keys, text).text).toBe(expected);
    expect(streamed(keys, ["a sk-ab", "cd12", "34 b sk-zz c s", "k-0000", "0000sk-1111", "1111 d"]).text).toBe(expected);
  });

  test("an unbounded match is redacted in pieces of at most the window, leaving none of it", () => {
    const letters = patterns({ name: "letters", pattern: "[a-z]+", action: "redact" });
    const result = streamed(letters, splitAtRandom("x".repeat(5_000) + " 12 " + "y".repeat(10), 3, 200));
    expect(result.text.replaceAll(REDACTED, "")).toBe(" 12 ");
    expect(result.text.startsWith(REDACTED)).toBe(true);
  });

  test("\\b sees the text before a chunk boundary", () => {
    const word = patterns({ name: "key", pattern: "\\bkey\\b", action: "redact" });
    expect(streamed(word, ["mon", "key key", "s key"]).text).toBe(`monkey ${REDACTED}s ${REDACTED}`.replace(`${REDACTED}s`, "keys"));
    expect(redactText(word, "monkey key keys key").text).toBe(`monkey ${REDACTED} keys ${REDACTED}`);
  });

  test("block ends the answer at the match: the text before it is passed on, nothing after", () => {
    const block = patterns({ name: "leak", pattern: "BEGIN PRIVATE KEY", action: "block" }, { name: "phone", pattern: "\\d{3}-\\d{4}", action: "redact" });
    const redactor = new StreamRedactor(block);
    expect(redactor.push("call 555-0123, here: -----BEGIN PRIV").text).toBe(`call ${REDACTED}, here: -----`);
    const stopped = redactor.push("ATE KEY----- abc");
    expect(stopped.text).toBe("");
    expect(stopped.refusal).toMatchObject({ status: 403, code: "permission_denied", policy: { policyId: "pol_resp" } });
    expect(stopped.refusal!.message).toContain('"leak"');
    expect(redactor.push("more").text).toBe("");
    expect(redactor.end()).toEqual({ text: "" });
    expect(redactText(block, "ok BEGIN PRIVATE KEY x")).toMatchObject({ text: "ok ", refusal: { code: "permission_denied" } });
  });

  test("a pattern with a literal prefix holds back only where that prefix could still start", () => {
    const key = patterns({ name: "key", pattern: "sk-[A-Za-z0-9]{20,}", action: "redact" });
    const redactor = new StreamRedactor(key);
    // No position of this text can start "sk-": all of it goes out at once.
    expect(redactor.push("ask me anything, tasks are skipped").text).toBe("ask me anything, tasks are skipped");
    expect(redactor.heldChars).toBe(0);
    // "s" could be the start of "sk-": only it is held.
    expect(redactor.push(" yes").text).toBe(" ye");
    expect(redactor.heldChars).toBe(1);
    expect(redactor.push("k").text).toBe("");
    expect(redactor.heldChars).toBe(2);
    // "skx" cannot start a match: released.
    expect(redactor.push("x and more").text).toBe("skx and more");
    expect(redactor.heldChars).toBe(0);
    expect(redactor.end()).toEqual({ text: "" });
  });

  test("a bounded pattern with no fixed prefix holds back its longest match plus one character", () => {
    const pairs = patterns({ name: "pairs", pattern: "(?:ab|cd)x", action: "redact" });
    const redactor = new StreamRedactor(pairs);
    let out = "";
    for (let i = 0; i < 100; i++) {
      out += redactor.push("0123456789").text;
      expect(redactor.heldChars).toBe(4);
    }
    out += redactor.end().text;
    expect(out).toBe("0123456789".repeat(100));
    expect(streamed(pairs, ["xxa", "bxcdcd", "x"]).text).toBe(`xx${REDACTED}cd${REDACTED}`);
  });

  test("an unbounded pattern with no fixed prefix holds back at most one window", () => {
    const runs = patterns({ name: "runs", pattern: "(?:ab|cd)x+", action: "redact" });
    const redactor = new StreamRedactor(runs);
    let out = "";
    for (let i = 0; i < 100; i++) {
      out += redactor.push("0123456789").text;
      expect(redactor.heldChars).toBeLessThanOrEqual(WINDOW_CHARS);
      if (i >= WINDOW_CHARS / 10) expect(redactor.heldChars).toBeGreaterThanOrEqual(MAX_MATCH_CHARS);
    }
    out += redactor.end().text;
    expect(out).toBe("0123456789".repeat(100));
  });

  test("a pattern that never matches costs no holdback where its prefix cannot start", () => {
    const digits = patterns({ name: "card", pattern: "\\d{16}", action: "redact" });
    const prose = new StreamRedactor(digits);
    expect(prose.push("no numbers in this answer at all").text).toBe("no numbers in this answer at all");
    expect(prose.heldChars).toBe(0);
    // From a digit on, text is held until the longest match (16) plus one has arrived...
    expect(prose.push(" until 2026").text).toBe(" until ");
    expect(prose.heldChars).toBe(4);
    // ...or, as here, until no digit is left that could start one.
    expect(prose.push(" and then some more text").text).toBe("2026 and then some more text");
    expect(prose.heldChars).toBe(0);
  });

  test("astral characters are never split between two emitted pieces", () => {
    const scan = patterns({ name: "x", pattern: "(?:q|w)z", action: "redact" });
    const text = "😀".repeat(400);
    const redactor = new StreamRedactor(scan);
    for (const chunk of splitAtRandom(text, 11, 60)) {
      const piece = redactor.push(chunk).text;
      if (piece.length > 0) expect(/[\uD800-\uDBFF]$/.test(piece)).toBe(false);
    }
  });
});
