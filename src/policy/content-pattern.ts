/**
 * Guardrail content patterns: which regular expressions are accepted, and how they are
 * compiled. The pattern runs on the request thread over every prompt (and, for
 * response-side patterns, every answer) of the principals it is bound to, on a
 * backtracking engine: a pattern whose matching time can grow exponentially — or as a
 * high power of the text's length — with a crafted input would let one prompt stall the
 * process. Patterns are therefore held to a subset whose worst case stays near-linear:
 *
 * - at most MAX_PATTERN_LENGTH characters;
 * - no backreferences and no lookaround (they need backtracking by definition; linear
 *   engines such as RE2 refuse them too);
 * - no nested repetition: a group that contains a variable repetition (`*`, `+`, `?`,
 *   `{m,n}`) or an alternation may itself repeat at most MAX_GROUP_REPEAT times —
 *   `(a+)+`, `(a|aa)*` and `(\w+\s?)*` are refused; `(?:\d{3}-){2}\d{4}`,
 *   `(?:secret|token){1,3}` and `sk-[A-Za-z0-9]{20,}` are accepted;
 * - counted repetitions up to MAX_COUNTED_REPEAT;
 * - a pattern must not match the empty string (it would match everywhere).
 *
 * Adjacent repetitions of overlapping classes (`\w+\w+x`) still cost a low polynomial of
 * the text's length; the request body's size bounds that. A leading `(?i)` (the inline
 * flag other engines use) means case-insensitive; `(?i:…)` groups work as well.
 */
export const MAX_PATTERN_LENGTH = 512;
export const MAX_GROUP_REPEAT = 8;
export const MAX_COUNTED_REPEAT = 1_000;

/** Why a pattern is refused, or undefined when it is accepted. */
export function contentPatternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return "must not be empty";
  if (pattern.length > MAX_PATTERN_LENGTH) return `must be at most ${MAX_PATTERN_LENGTH} characters`;
  let regex: RegExp;
  try {
    regex = compileContentPattern(pattern);
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message})`;
  }
  const structural = structuralProblem(stripInlineFlag(pattern).source);
  if (structural) return structural;
  if (regex.test("")) return "must not match the empty string";
  return undefined;
}

/**
 * The RegExp a validated pattern runs as: Unicode mode, global (every match is found,
 * for redaction), case-insensitive when the pattern starts with `(?i)`.
 */
export function compileContentPattern(pattern: string): RegExp {
  const { source, caseInsensitive } = stripInlineFlag(pattern);
  return new RegExp(source, caseInsensitive ? "giu" : "gu");
}

function stripInlineFlag(pattern: string): { source: string; caseInsensitive: boolean } {
  return pattern.startsWith("(?i)") ? { source: pattern.slice(4), caseInsensitive: true } : { source: pattern, caseInsensitive: false };
}

interface GroupFrame {
  /** A variable repetition or an alternation somewhere inside the group. */
  ambiguous: boolean;
}

interface Repetition {
  length: number;
  max: number;
  variable: boolean;
}

/** A quantifier at `at`, if any: `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each with an optional lazy `?`. */
function repetitionAt(source: string, at: number): Repetition | undefined {
  const char = source[at];
  let length: number;
  let min: number;
  let max: number;
  if (char === "*" || char === "+") [length, min, max] = [1, char === "+" ? 1 : 0, Infinity];
  else if (char === "?") [length, min, max] = [1, 0, 1];
  else if (char === "{") {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(at));
    if (!match) return undefined;
    min = Number(match[1]);
    max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
    length = match[0].length;
  } else return undefined;
  if (source[at + length] === "?") length++;
  return { length, max, variable: max !== min };
}

/**
 * One pass over the pattern with a stack of open groups. Escapes and character classes
 * are skipped as units; at each group's close, its repetition is checked against what
 * the group contains.
 */
function structuralProblem(source: string): string | undefined {
  const stack: GroupFrame[] = [{ ambiguous: false }];
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    let atomEnd = i + 1;
    let closed: GroupFrame | undefined;
    if (char === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return "must not use backreferences";
      atomEnd = i + 2;
    } else if (char === "[") {
      atomEnd = endOfClass(source, i);
    } else if (char === "(") {
      if (/^\(\?(=|!|<=|<!)/.test(source.slice(i))) return "must not use lookahead or lookbehind";
      stack.push({ ambiguous: false });
      i++;
      continue;
    } else if (char === ")") {
      closed = stack.pop();
      if (!closed || stack.length === 0) return "has an unbalanced parenthesis";
    } else if (char === "|") {
      stack[stack.length - 1]!.ambiguous = true;
      i++;
      continue;
    }
    const repetition = repetitionAt(source, atomEnd);
    const frame = stack[stack.length - 1]!;
    if (closed) {
      if (repetition && closed.ambiguous && repetition.max > MAX_GROUP_REPEAT) {
        return `must not repeat a group that contains a repetition or an alternation more than ${MAX_GROUP_REPEAT} times (catastrophic backtracking)`;
      }
      if (closed.ambiguous) frame.ambiguous = true;
    }
    if (repetition) {
      if (repetition.max !== Infinity && repetition.max > MAX_COUNTED_REPEAT) return `must not count repetitions above ${MAX_COUNTED_REPEAT}`;
      if (repetition.variable) frame.ambiguous = true;
      atomEnd += repetition.length;
    }
    i = atomEnd;
  }
  return stack.length === 1 ? undefined : "has an unbalanced parenthesis";
}

/** The index after the `]` closing the class that opens at `start` (in JavaScript `[]` is an empty class, not a literal `]`). */
function endOfClass(source: string, start: number): number {
  let i = start + 1;
  while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
  return i + 1;
}
