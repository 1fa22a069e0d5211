import type { ContentPatternClause } from "../policy/effective-policy";
import { firstPrefixCandidate, isHighSurrogate, patternPrefix, type PatternPrefix } from "./pattern-prefix";

/**
 * Finds content-pattern matches in bounded windows, so that what one pattern costs is
 * bounded per character scanned, and so that a stream can be scanned as it arrives with
 * the same result as the whole text, wherever its chunks were cut.
 *
 * The scan moves a position `pos` through the text:
 * 1. Text where no pattern's prefix can start (see pattern-prefix.ts) is clear: `pos`
 *    moves to the first candidate position.
 * 2. At a candidate, every pattern runs once over the window of the next WINDOW_CHARS
 *    characters (with one character before `pos`, so `\b` and `^` see the real text).
 *    The leftmost match, if it starts within the first STEP_CHARS, is the match there
 *    (ties: the first pattern in policy order); otherwise the first STEP_CHARS are clear.
 *
 * Every decision reads at most WINDOW_CHARS characters past `pos`, and a stream waits
 * for exactly those (or its end) before deciding, so a chunked stream decides exactly
 * what the whole text decides. A match therefore spans at most WINDOW_CHARS characters
 * from where its window starts, and in practice MAX_MATCH_CHARS (= STEP_CHARS, the
 * documented limit): a longer one (an unbounded `[a-z]+` over a long run) is cut at the
 * window's end, and scanning resumes after the cut, so a pattern that can match from
 * there matches again. A `$` sees the window's end as the text's end.
 */
export const MAX_MATCH_CHARS = 256;
export const STEP_CHARS = MAX_MATCH_CHARS;
export const WINDOW_CHARS = 2 * MAX_MATCH_CHARS;

export interface ScanPattern {
  clause: ContentPatternClause;
  prefix: PatternPrefix | null;
}

/** A decision about the text at `pos`. */
export type ScanStep =
  /** Nothing can be decided before more text arrives; everything from `pos` is held. */
  | { kind: "need_more" }
  /** The text up to `until` holds no match. */
  | { kind: "clear"; until: number }
  | { kind: "match"; start: number; end: number; clause: ContentPatternClause };

/** The patterns of one scan, their prefixes derived once (cached per compiled RegExp). */
export function scanPatterns(clauses: readonly ContentPatternClause[]): ScanPattern[] {
  return clauses.map((clause) => ({ clause, prefix: prefixOf(clause.regex) }));
}

const prefixes = new WeakMap<RegExp, PatternPrefix | null>();
function prefixOf(regex: RegExp): PatternPrefix | null {
  let prefix = prefixes.get(regex);
  if (prefix === undefined) prefixes.set(regex, (prefix = patternPrefix(regex.source, regex.flags)));
  return prefix;
}

/**
 * The next decision about `text` from `pos` (0, or 1 when `text[0]` is the character
 * before the scanned text, kept as context). `complete`: no more text will follow.
 */
export function scanStep(patterns: readonly ScanPattern[], text: string, pos: number, complete: boolean): ScanStep {
  const length = text.length;
  if (pos >= length) return complete ? { kind: "clear", until: length } : { kind: "need_more" };
  let candidate = -1;
  for (const pattern of patterns) {
    const at = pattern.prefix === null ? pos : firstPrefixCandidate(pattern.prefix, text, pos, complete);
    if (at !== -1 && (candidate === -1 || at < candidate)) candidate = at;
    if (candidate === pos) break;
  }
  if (candidate === -1) return { kind: "clear", until: length };
  if (candidate > pos) return { kind: "clear", until: candidate };
  if (!complete && length < pos + WINDOW_CHARS) return { kind: "need_more" };

  const windowStart = pos > 0 ? pos - 1 : 0;
  const window = text.slice(windowStart, Math.min(length, pos + WINDOW_CHARS));
  let best: { start: number; end: number; clause: ContentPatternClause } | undefined;
  for (const { clause } of patterns) {
    const found = firstNonEmptyMatch(clause.regex, window, pos - windowStart);
    if (found && (best === undefined || found.start < best.start - windowStart)) {
      best = { start: found.start + windowStart, end: found.end + windowStart, clause };
    }
  }
  if (best && best.start < pos + STEP_CHARS) return { kind: "match", ...best };
  return { kind: "clear", until: Math.min(length, noSplit(text, pos + STEP_CHARS)) };
}

/** The leftmost match of a non-empty length at or after `from`: an empty match (`\b`) judges nothing. */
function firstNonEmptyMatch(regex: RegExp, window: string, from: number): { start: number; end: number } | undefined {
  regex.lastIndex = from;
  for (;;) {
    const match = regex.exec(window);
    if (!match) return undefined;
    if (match[0].length > 0) return { start: match.index, end: match.index + match[0].length };
    regex.lastIndex = match.index + 1;
  }
}

/** `at`, moved back one when it would separate a surrogate pair. */
function noSplit(text: string, at: number): number {
  return at < text.length && at > 0 && isHighSurrogate(text.charCodeAt(at - 1)) ? at - 1 : at;
}
