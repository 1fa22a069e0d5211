/**
 * The longest text (in UTF-16 code units) a content pattern can match, or Infinity when
 * a repetition is unbounded (`+`, `*`, `{n,}`). A pattern with a bounded length is
 * judged at a position as soon as that many characters (and one more, for `\b` and `$`)
 * have arrived, so a stream holds back at most that much from where it could start.
 *
 * Counted conservatively: a character class, `.` and `\p{…}` may match an astral
 * character (two code units) under the `u` flag; a literal counts its own length.
 * Patterns are validated first (src/policy/content-pattern.ts): no lookaround, no
 * backreferences.
 */
export function maxMatchLength(source: string): number {
  interface Frame {
    /** The longest alternative closed so far in this group. */
    best: number;
    /** The current alternative's length. */
    sequence: number;
  }
  const stack: Frame[] = [{ best: 0, sequence: 0 }];
  let last = 0; // the length of the atom a quantifier would apply to
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    const frame = stack[stack.length - 1]!;
    let atom: number | undefined;
    let next = i + 1;
    if (char === "\\") {
      const escaped = source[i + 1] ?? "";
      if (escaped === "b" || escaped === "B") [next, atom] = [i + 2, 0];
      else if (escaped === "p" || escaped === "P" || (escaped === "u" && source[i + 2] === "{")) {
        next = source.indexOf("}", i) + 1;
        atom = 2;
      } else if (escaped === "u") [next, atom] = [i + 6, 1];
      else if (escaped === "x") [next, atom] = [i + 4, 1];
      else if (escaped === "c") [next, atom] = [i + 3, 1];
      else [next, atom] = [i + 2, 1];
    } else if (char === "[") {
      next = i + 1;
      while (next < source.length && source[next] !== "]") next += source[next] === "\\" ? 2 : 1;
      next++;
      atom = 2;
    } else if (char === "(") {
      stack.push({ best: 0, sequence: 0 });
      // Skip a group's prefix: `?:`, `?<name>`, `?i:` and the like.
      if (source[i + 1] === "?") next = source[i + 2] === "<" ? source.indexOf(">", i) + 1 : source.indexOf(":", i) + 1;
      i = next;
      continue;
    } else if (char === ")") {
      const closed = stack.pop()!;
      atom = Math.max(closed.best, closed.sequence);
    } else if (char === "|") {
      frame.best = Math.max(frame.best, frame.sequence);
      frame.sequence = 0;
      i++;
      continue;
    } else if (char === "^" || char === "$") atom = 0;
    else if (char === ".") atom = 2;
    else if (char === "*" || char === "+" || char === "?" || char === "{") {
      let times: number;
      if (char === "{") {
        const counted = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i));
        if (!counted) return Infinity; // not valid under the `u` flag; be safe
        times = counted[2] === undefined ? Number(counted[1]) : counted[3] === "" ? Infinity : Number(counted[3]);
        next = i + counted[0].length;
      } else times = char === "?" ? 1 : Infinity;
      if (source[next] === "?") next++; // lazy
      const target = stack[stack.length - 1]!;
      target.sequence += last === 0 ? 0 : last * times - last;
      last = 0;
      i = next;
      continue;
    } else atom = source.codePointAt(i)! > 0xffff ? ((next = i + 2), 2) : 1;
    const target = stack[stack.length - 1]!;
    target.sequence += atom;
    last = atom;
    i = next;
  }
  const top = stack[0]!;
  return Math.max(top.best, top.sequence);
}
