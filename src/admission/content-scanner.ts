import type { ContentPatternClause } from "../policy/effective-policy";
import { firstPrefixCandidate, isHighSurrogate, patternPrefix, type PatternPrefix } from "./pattern-prefix";
import { maxMatchLength } from "./pattern-length";

/**
 * Finds content-pattern matches so that a stream scanned as it arrives gives the same
 * result as the whole text, wherever its chunks were cut, holding back as little as the
 * patterns allow, at a cost bounded per character.
 *
 * The scan moves a position `pos` through the text. Text where no pattern's fixed prefix
 * can start (pattern-prefix.ts) is clear at once. At a candidate position:
 *
 * - **Bounded patterns** (every pattern's longest match, pattern-length.ts, is at most
 *   MAX_MATCH_CHARS): a position is decided once the pattern's longest match and one more
 *   character (for `\b` and `$`) have arrived after it. The result is exactly the
 *   regular leftmost matching of the whole text (String.replace's), and a stream holds
 *   back at most that longest match plus one, from the first candidate on.
 * - **Unbounded patterns** (`[a-z]+`, `sk-\w{20,}`): every pattern runs over a window of
 *   WINDOW_CHARS characters from `pos` (with one character before it, so `\b` and `^`
 *   see the real text). The leftmost match, if it starts within the first STEP_CHARS,
 *   is the match; otherwise those STEP_CHARS are clear. A stream waits for the whole
 *   window (or its end). A match is thereby cut at the window's end: at most
 *   WINDOW_CHARS characters, and scanning resumes after the cut, so a pattern that
 *   matches from there (`[a-z]+` over a long run) matches again; one that needs its
 *   prefix again (`sk-\w{20,}`) does not, and the rest of an over-long match passes.
 *   A `$` sees the window's end as the text's end.
 *
 * The unbounded rule also serves request-side scans of whole texts, where windows bound
 * what one `exec` can cost (patterns are polynomial at worst: src/policy/README.md).
 */
export const MAX_MATCH_CHARS = 256;
export const STEP_CHARS = MAX_MATCH_CHARS;
export const WINDOW_CHARS = 2 * MAX_MATCH_CHARS;

export interface ScanPattern {
  clause: ContentPatternClause;
  prefix: PatternPrefix | null;
}

export interface PatternSet {
  patterns: ScanPattern[];
  /** The longest match of any pattern when all are bounded by MAX_MATCH_CHARS; otherwise null (windows). */
  boundedLength: number | null;
}

/** A decision about the text at `pos`. */
export type ScanStep =
  /** Nothing can be decided before more text arrives; everything from `pos` is held. */
  | { kind: "need_more" }
  /** The text up to `until` holds no match. */
  | { kind: "clear"; until: number }
  | { kind: "match"; start: number; end: number; clause: ContentPatternClause };

/** The patterns of one scan; `windowed` forces the window rule (request-side scans). */
export function scanPatterns(clauses: readonly ContentPatternClause[], options: { windowed?: boolean } = {}): PatternSet {
  const patterns = clauses.map((clause) => ({ clause, prefix: analysisOf(clause.regex).prefix }));
  const longest = Math.max(0, ...clauses.map((clause) => analysisOf(clause.regex).maxLength));
  return { patterns, boundedLength: options.windowed || longest > MAX_MATCH_CHARS ? null : longest };
}

/** Per compiled pattern (shared by every request), derived once. */
const analyses = new WeakMap<RegExp, { prefix: PatternPrefix | null; maxLength: number }>();
function analysisOf(regex: RegExp) {
  let analysis = analyses.get(regex);
  if (!analysis) analyses.set(regex, (analysis = { prefix: patternPrefix(regex.source, regex.flags), maxLength: maxMatchLength(regex.source) }));
  return analysis;
}

/**
 * Where each pattern's prefix next occurs in one text: a scan of one text passes the
 * same memo to every step, so a pattern whose prefix is far away (or absent) is not
 * searched for again at every step — that would cost the text's length per match.
 */
export type CandidateMemo = number[];

/**
 * The next decision about `text` from `pos` (0, or 1 when `text[0]` is the character
 * before the scanned text, kept as context). `complete`: no more text will follow.
 * `memo`: [] at the start of a text, then the same array for each step over that text.
 */
export function scanStep(set: PatternSet, text: string, pos: number, complete: boolean, memo: CandidateMemo = []): ScanStep {
  const length = text.length;
  if (pos >= length) return complete ? { kind: "clear", until: length } : { kind: "need_more" };
  let candidate = -1;
  for (let i = 0; i < set.patterns.length; i++) {
    const prefix = set.patterns[i]!.prefix;
    let at = pos;
    if (prefix !== null) {
      const known = memo[i];
      // -1: none up to the end of this text; a position at or after `pos`: still the next one.
      at = known !== undefined && (known === -1 || known >= pos) ? known : firstPrefixCandidate(prefix, text, pos, complete);
      memo[i] = at;
    }
    if (at !== -1 && (candidate === -1 || at < candidate)) candidate = at;
    if (candidate === pos) break;
  }
  if (candidate === -1) return { kind: "clear", until: length };
  if (candidate > pos) return { kind: "clear", until: candidate };
  return set.boundedLength === null ? windowStep(set, text, pos, complete) : boundedStep(set, set.boundedLength, text, pos, complete);
}

function boundedStep(set: PatternSet, longest: number, text: string, pos: number, complete: boolean): ScanStep {
  // Positions before `decided` have their longest match and one more character here.
  const decided = complete ? text.length : noSplit(text, text.length - longest - 1);
  if (pos >= decided) return { kind: "need_more" };
  // Judge the starts in [pos, pos + STEP_CHARS) only, over just the text they can reach,
  // so that one step costs the same however long the text is.
  const until = Math.min(decided, noSplit(text, pos + STEP_CHARS));
  const windowStart = pos > 0 ? pos - 1 : 0;
  const window = text.slice(windowStart, Math.min(text.length, until + longest + 1));
  const best = leftmostMatch(set, window, pos - windowStart, windowStart);
  if (best && best.start < until) return { kind: "match", ...best };
  return { kind: "clear", until };
}

function windowStep(set: PatternSet, text: string, pos: number, complete: boolean): ScanStep {
  const length = text.length;
  if (!complete && length < pos + WINDOW_CHARS) return { kind: "need_more" };
  const windowStart = pos > 0 ? pos - 1 : 0;
  const window = text.slice(windowStart, Math.min(length, pos + WINDOW_CHARS));
  const best = leftmostMatch(set, window, pos - windowStart, windowStart);
  if (best && best.start < pos + STEP_CHARS) return { kind: "match", ...best };
  return { kind: "clear", until: Math.min(length, noSplit(text, pos + STEP_CHARS)) };
}

/** The leftmost non-empty match of any pattern in `text` from `from` (ties: policy order), at `offset` in the whole text. */
function leftmostMatch(set: PatternSet, text: string, from: number, offset: number): { start: number; end: number; clause: ContentPatternClause } | undefined {
  let best: { start: number; end: number; clause: ContentPatternClause } | undefined;
  for (const { clause } of set.patterns) {
    const regex = clause.regex;
    regex.lastIndex = from;
    let match = regex.exec(text);
    // An empty match (`\b` alone) judges nothing: look on.
    while (match && match[0].length === 0) {
      regex.lastIndex = match.index + 1;
      match = regex.exec(text);
    }
    if (match && (best === undefined || match.index + offset < best.start)) {
      best = { start: match.index + offset, end: match.index + offset + match[0].length, clause };
    }
  }
  return best;
}

/** `at`, moved back one when it would separate a surrogate pair. */
function noSplit(text: string, at: number): number {
  return at < text.length && at > 0 && isHighSurrogate(text.charCodeAt(at - 1)) ? at - 1 : at;
}
