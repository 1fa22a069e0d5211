/**
 * The fixed start every match of a content pattern has, when the pattern has one: its
 * leading single-character atoms (`sk-` in `sk-[A-Za-z0-9]{20,}`, `\d\d` in `\d\d-\d+`).
 * A position where the prefix cannot start holds no match, so the scanner passes such
 * text on without running the pattern, and a stream holds back nothing before the first
 * position where the prefix could still start.
 *
 * Only a pattern that is one concatenation at its top level has a prefix: a top-level
 * `|`, a leading group, anchor or word boundary gives none (every position is a
 * candidate). An atom followed by `?`, `*` or `{0,…}` ends the prefix before it; one
 * followed by `+` or `{n,…}` ends it after it.
 */
export interface PatternPrefix {
  /** The atoms in sequence, global: `exec` from a position finds the next full occurrence. */
  sequence: RegExp;
  /** Each atom alone, sticky, to judge a prefix cut short by the end of the text received so far. */
  atoms: RegExp[];
}

const MAX_PREFIX_ATOMS = 16;
const CLASS_ESCAPES = "dDwWsS";
const CONTROL_ESCAPES = "nrtfv0";
const SPECIAL = new Set(["\\", "^", "$", ".", "|", "?", "*", "+", "(", ")", "[", "]", "{", "}"]);

/** The prefix of a validated pattern source (the `(?i)` flag already stripped), or null when it has none. */
export function patternPrefix(source: string, flags: string): PatternPrefix | null {
  if (hasTopLevelAlternation(source)) return null;
  const atoms: string[] = [];
  let i = 0;
  while (i < source.length && atoms.length < MAX_PREFIX_ATOMS) {
    const atom = atomAt(source, i);
    if (atom === undefined) break;
    const after = i + atom.length;
    const quantifier = source[after];
    if (quantifier === "?" || quantifier === "*" || (quantifier === "{" && /^\{0[,}]/.test(source.slice(after)))) break;
    atoms.push(atom);
    if (quantifier === "+" || quantifier === "{") break;
    i = after;
  }
  if (atoms.length === 0) return null;
  const base = flags.replace(/[gy]/g, "");
  return { sequence: new RegExp(atoms.join(""), base + "g"), atoms: atoms.map((atom) => new RegExp(atom, base + "y")) };
}

/** The single-character atom at `i`, as source text, or undefined when what starts there is not one. */
function atomAt(source: string, i: number): string | undefined {
  const char = source[i]!;
  if (char === "\\") {
    const next = source[i + 1];
    if (next === undefined) return undefined;
    if (CLASS_ESCAPES.includes(next) || CONTROL_ESCAPES.includes(next)) return source.slice(i, i + 2);
    // An escaped punctuation character is that character; letters and digits are
    // assertions, references or code-point escapes the prefix does not interpret.
    return /[A-Za-z0-9]/.test(next) ? undefined : source.slice(i, i + 2);
  }
  if (char === "[") {
    let end = i + 1;
    while (end < source.length && source[end] !== "]") end += source[end] === "\\" ? 2 : 1;
    return end < source.length ? source.slice(i, end + 1) : undefined;
  }
  if (SPECIAL.has(char)) return undefined;
  // A literal: a whole code point (a surrogate pair is one atom under the `u` flag).
  const codePoint = source.codePointAt(i)!;
  return String.fromCodePoint(codePoint);
}

function hasTopLevelAlternation(source: string): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (char === "\\") i++;
    else if (char === "[") {
      i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
    } else if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (char === "|" && depth === 0) return true;
  }
  return false;
}

/**
 * The first position at or after `from` where a match of a pattern with this prefix could
 * start, or -1. When the text may still grow (`complete` false), a position whose
 * remaining characters are all a start of the prefix counts: the next characters decide.
 */
export function firstPrefixCandidate(prefix: PatternPrefix, text: string, from: number, complete: boolean): number {
  prefix.sequence.lastIndex = from;
  const full = prefix.sequence.exec(text);
  if (full) return full.index;
  if (complete) return -1;
  // A prefix cut short by the end of the text: at most one code point per atom from the end.
  const earliest = Math.max(from, text.length - 2 * prefix.atoms.length);
  for (let start = earliest; start < text.length; start++) {
    // A match starts at a code point, never inside a surrogate pair.
    if (isLowSurrogate(text.charCodeAt(start)) && start > 0 && isHighSurrogate(text.charCodeAt(start - 1))) continue;
    if (couldStartPrefix(prefix, text, start)) return start;
  }
  return -1;
}

function couldStartPrefix(prefix: PatternPrefix, text: string, start: number): boolean {
  let at = start;
  for (const atom of prefix.atoms) {
    if (at >= text.length) return true;
    atom.lastIndex = at;
    const match = atom.exec(text);
    // A lone surrogate at the end may be half of a pair still to come: undecided.
    if (!match) return at === text.length - 1 && isHighSurrogate(text.charCodeAt(at));
    at += match[0].length;
  }
  return false; // the whole prefix is there: exec above would have found it
}

export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
