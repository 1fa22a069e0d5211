/**
 * The long strings of a decoded request (a pasted file, a base64 image, a 30 MiB prompt)
 * cross the worker boundary beside its JSON, not inside it (src/workers/wire-format.ts).
 * Parsing a decoded 32 MiB request out of JSON on the request thread, and writing it into
 * JSON again for its encode, each stalled every other request for 100–150 ms on this
 * machine: each makes a fresh copy of every long string. Set aside, a long string crosses
 * as it is, and only the rest of the request (small) is written and parsed.
 */

/** A string at least this long is set aside; shorter ones cost less in the JSON than a field beside it. */
export const LARGE_STRING_CHARS = 64 * 1024;

/** Where a value sits inside a JSON value: the keys and indexes from the root. */
export type JsonPath = readonly (string | number)[];

type Container = Record<string | number, unknown>;

/**
 * Where `value`'s strings of LARGE_STRING_CHARS or more are. Recursive: what it walks is a
 * decoded request, whose depth the decoder bounds (src/protocols/shared/json-depth.ts).
 */
export function findLargeStrings(value: unknown): JsonPath[] {
  const found: JsonPath[] = [];
  const path: (string | number)[] = [];
  const visit = (node: unknown): void => {
    if (typeof node === "string") {
      if (node.length >= LARGE_STRING_CHARS) found.push(path.slice());
      return;
    }
    if (typeof node !== "object" || node === null) return;
    if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index++) {
        path.push(index);
        visit(node[index]);
        path.pop();
      }
      return;
    }
    for (const key of Object.keys(node)) {
      path.push(key);
      visit((node as Container)[key]);
      path.pop();
    }
  };
  visit(value);
  return found;
}

export interface SetAside {
  /** The value with "" where each string set aside was. */
  skeleton: unknown;
  /** Where they were, in the order of `strings`. */
  paths: JsonPath[];
  strings: string[];
}

/**
 * `value` with the strings at `paths` set aside. `value` is not changed: the containers on
 * the way to each string are copied (each once), everything else is shared. A path that
 * does not lead to a large string (the request was changed since the paths were found)
 * is skipped, and what is there stays in the skeleton.
 */
export function setAsideStrings(value: unknown, paths: readonly JsonPath[]): SetAside {
  const used: JsonPath[] = [];
  const strings: string[] = [];
  const copies = new Map<object, Container>();
  const copyOf = (node: object): Container => {
    let copy = copies.get(node);
    if (copy === undefined) {
      copy = (Array.isArray(node) ? node.slice() : { ...node }) as Container;
      copies.set(node, copy);
    }
    return copy;
  };
  for (const path of paths) {
    const found = valueAt(value, path);
    if (typeof found !== "string" || found.length < LARGE_STRING_CHARS || path.length === 0) continue;
    let original = value as Container;
    let copy = copyOf(original);
    for (let index = 0; index < path.length - 1; index++) {
      const key = path[index]!;
      original = original[key] as Container;
      const child = copyOf(original);
      copy[key] = child;
      copy = child;
    }
    copy[path[path.length - 1]!] = "";
    used.push(path);
    strings.push(found);
  }
  return { skeleton: used.length === 0 ? value : copies.get(value as object), paths: used, strings };
}

/** Puts `strings` back at `paths` in `skeleton` (which the caller owns: a value it just parsed). */
export function restoreStrings(skeleton: unknown, paths: readonly JsonPath[], strings: readonly string[]): void {
  if (paths.length !== strings.length) throw new Error(`${paths.length} paths for ${strings.length} strings set aside`);
  for (let index = 0; index < paths.length; index++) {
    const path = paths[index]!;
    const parent = valueAt(skeleton, path.slice(0, -1));
    const key = path[path.length - 1];
    if (typeof parent !== "object" || parent === null || key === undefined || typeof (parent as Container)[key] !== "string") {
      throw new Error(`no string set aside at ${JSON.stringify(path)}`);
    }
    (parent as Container)[key] = strings[index];
  }
}

/** What is at `path` in `value`, through its own properties only; undefined where the path leads nowhere. */
function valueAt(value: unknown, path: JsonPath): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Container)[key];
  }
  return node;
}
