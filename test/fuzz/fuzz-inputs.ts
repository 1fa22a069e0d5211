/**
 * Generators for the hostile-input fuzz (hostile-input.test.ts): a seeded PRNG and
 * mutations of bodies, paths, query strings and headers (the routes and their valid
 * requests are in fuzz-routes.ts). Everything is drawn from the PRNG, so a seed
 * replays a run.
 */

/** mulberry32: small, fast, good enough to spread test cases; one state per run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

export class Fuzzer {
  constructor(readonly random: () => number) {}
  chance(p: number): boolean {
    return this.random() < p;
  }
  int(max: number): number {
    return Math.floor(this.random() * max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** Text placed where a value goes, replaced by `DEEP_JSON` after serializing (a deep value cannot be serialized by JSON.stringify). */
export const DEEP_MARKER = "\u0001deep\u0001";
export const DEEP_JSON = () => "[".repeat(100_000) + "]".repeat(100_000);

/**
 * Object keys that name members of Object.prototype: a lookup `table[key]` into a plain
 * object finds a function (or the prototype) for them instead of nothing.
 */
export const HOSTILE_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "isPrototypeOf", "__defineGetter__", "toLocaleString"] as const;

/** Model ids that are malformed, name no preset, or name an Object.prototype member where a table is keyed by model or provider. */
export function hostileModelId(fuzz: Fuzzer): string {
  return fuzz.pick<() => string>([
    () => fuzz.pick(["@", "@/", "@x/", "@:", "@::", "@:cost", "@x:", "@/x/y", "@x//y", "@x/@y", "@.", "@-", "@x/:latency"]),
    () => fuzz.pick([":", "::", ":cost", "/", "//", "a//b", "a/", "/a", "a/b/", "x", "a:b"]),
    () => `@${fuzz.pick(HOSTILE_KEYS)}`,
    () => `@p/${fuzz.pick(HOSTILE_KEYS)}/${fuzz.pick(HOSTILE_KEYS)}`,
    () => `${fuzz.pick(["openai", "mock-openai", "anthropic", "mock-google"])}/${fuzz.pick(HOSTILE_KEYS)}`,
    () => `${fuzz.pick(HOSTILE_KEYS)}/${fuzz.pick(["x", "gpt-4o-mini", ...HOSTILE_KEYS])}`,
    () => fuzz.pick(HOSTILE_KEYS),
    () => `mock-openai/gpt-4o-mini:${fuzz.pick(["cost", "__proto__", "constructor", ""])}`,
    () => `@${"a".repeat(fuzz.pick([255, 256, 300, 70_000]))}`,
    () => `mock-openai/${"g".repeat(fuzz.pick([250, 257, 5000]))}`,
    () => fuzz.pick(["mock-openai/gpt-4o-mini\u0000", "@x\u0000", "\u0000", "mock-openai/gpt\u00e9", "@\u00e9t\u00e9", "😀/😀", "@😀", "\ud800", "mock-openai/\u202egpt"]),
    () => fuzz.pick(["%00", "@%00", "mock-openai%2Fgpt-4o-mini", "mock-openai/gpt-4o-mini%00", "..", "../x", "@..", "mock-openai/../gpt"]),
    () => fuzz.pick([" ", "\t", "mock-openai/gpt-4o-mini ", " @x", "@x y"]),
  ])();
}

/** Values that have broken parsers, integer columns and SQL before. */
export function hostileValue(fuzz: Fuzzer): unknown {
  return fuzz.pick<() => unknown>([
    () => 1e20,
    () => 1e308,
    () => -1e308,
    () => 2 ** 53 + 2,
    () => -(2 ** 63),
    () => 0.5,
    () => -1,
    () => 0,
    () => "",
    () => "\u0000",
    () => `a\u0000b`,
    () => "\ud800",
    () => "\udfff\ud800",
    () => "😀".repeat(50),
    () => "x".repeat(fuzz.pick([300, 70_000])),
    () => "%00",
    () => "../../etc/passwd",
    () => "'; drop table accounts; --",
    () => null,
    () => true,
    () => [],
    () => ({}),
    () => [[[[[]]]]],
    () => ({ "": { "\u0000": 1 } }),
    () => JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'),
    () => DEEP_MARKER,
    () => "1e999",
    () => ["a", 1, null, { b: [] }],
    () => hostileModelId(fuzz),
    () => fuzz.pick(HOSTILE_KEYS),
    () => withHostileKey(fuzz, {}),
  ])();
}

/**
 * `target` with a property named by one of HOSTILE_KEYS. Defined, not assigned:
 * `target["__proto__"] = v` would set the prototype, which JSON.stringify does not write.
 */
export function withHostileKey<T extends object>(fuzz: Fuzzer, target: T, value: unknown = fuzz.pick<() => unknown>([() => 1, () => "x", () => true, () => ({ temperature: 1 }), () => [], () => null, () => hostileValue(fuzz)])()): T {
  Object.defineProperty(target, fuzz.pick(HOSTILE_KEYS), { value, enumerable: true, writable: true, configurable: true });
  return target;
}

type Json = unknown;

/** Every path into `value` (arrays by index), so a mutation can land anywhere. */
function paths(value: Json, prefix: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  if (prefix.length > 8 || typeof value !== "object" || value === null) return out;
  const entries: Array<[string | number, Json]> = Array.isArray(value) ? value.map((child, index) => [index, child]) : Object.entries(value);
  for (const [key, child] of entries) {
    out.push([...prefix, key]);
    paths(child, [...prefix, key], out);
  }
  return out;
}

function nodeAt(root: Json, path: Array<string | number>): Record<string | number, Json> {
  let node = root as Record<string | number, Json>;
  for (const step of path) node = (Object.hasOwn(node, step) ? node[step] : undefined) as Record<string | number, Json>;
  return node;
}

function setAt(root: Json, path: Array<string | number>, value: Json | undefined): void {
  const node = nodeAt(root, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
}

/** The objects (not arrays) in `body`, the root included: where a hostile key can go. */
function objectsIn(body: Json): Array<Record<string, Json>> {
  const found: Array<Record<string, Json>> = [];
  const isObject = (value: Json): value is Record<string, Json> => typeof value === "object" && value !== null && !Array.isArray(value);
  if (isObject(body)) found.push(body);
  for (const path of paths(body)) {
    const node = nodeAt(body, path);
    if (isObject(node)) found.push(node);
  }
  return found;
}

/** A body as text: the valid one, or one to three structural mutations of it, or raw junk. */
export function mutateBody(fuzz: Fuzzer, valid: Json): string {
  const roll = fuzz.random();
  if (roll < 0.12) return JSON.stringify(valid);
  if (roll < 0.25) {
    return fuzz.pick([
      "",
      "{",
      "null",
      "[]",
      '"text"',
      "1e999",
      "{}",
      '{"a":1,"a":2}',
      "\u0000",
      "\ufeff{}",
      DEEP_JSON(),
      '{"model":' + DEEP_JSON() + "}",
      JSON.stringify(valid).slice(0, fuzz.int(JSON.stringify(valid).length)),
      JSON.stringify(valid).replace(/"/, "'"),
    ]);
  }
  const body = structuredClone(valid) as Json;
  const count = 1 + fuzz.int(3);
  for (let i = 0; i < count; i++) {
    // A key that names an Object.prototype member, in any object of the body (params, metadata, tool schemas, …).
    if (fuzz.chance(0.3)) {
      const objects = objectsIn(body);
      if (objects.length > 0) withHostileKey(fuzz, fuzz.pick(objects));
      continue;
    }
    const all = paths(body);
    if (all.length === 0 || fuzz.chance(0.1)) {
      if (typeof body === "object" && body !== null && !Array.isArray(body)) (body as Record<string, Json>)[fuzz.pick(["unknown_field", "\u0000", "__proto__x", "model", "stream", "n"])] = hostileValue(fuzz);
      continue;
    }
    const target = fuzz.pick(all);
    setAt(body, target, fuzz.chance(0.15) ? undefined : hostileValue(fuzz));
  }
  return JSON.stringify(body).replaceAll(JSON.stringify(DEEP_MARKER), DEEP_JSON());
}

/** Raw bytes that are not valid UTF-8, for the few bodies sent as bytes. */
export function invalidUtf8(fuzz: Fuzzer, text: string): Uint8Array {
  const bytes = new TextEncoder().encode(text);
  const out = new Uint8Array(bytes.length + 2);
  const at = fuzz.int(bytes.length + 1);
  out.set(bytes.subarray(0, at));
  out.set(fuzz.pick([[0xc3, 0x28], [0xff, 0xfe], [0xed, 0xa0]]), at);
  out.set(bytes.subarray(at), at + 2);
  return out;
}

/** Values for `{nsid}`-style placeholders: real-looking, impossible, encoded, hostile. */
export function pathId(fuzz: Fuzzer, real: string): string {
  return fuzz.pick([
    real,
    real,
    "me",
    "%00",
    `${real}%00`,
    "me%00",
    "%E0%A4%A",
    "%ZZ",
    "%F0%9F%98%80",
    "..",
    "%2e%2e",
    "x".repeat(4000),
    "ns_" + "a".repeat(16),
    "k_%00",
    "acct_x%0d%0aSet-Cookie:%20a=b",
    "%27%3B%20drop%20table%20accounts%3B--",
    encodeURIComponent("😀"),
    // Looked up in a plain object, these find Object.prototype members.
    "constructor",
    "__proto__",
    "toString",
    "hasOwnProperty",
  ]);
}

/** Odd shapes of a whole path (dot segments, doubled slashes, junk queries). Some need a raw socket: fetch would normalize them. */
export function mutatePath(fuzz: Fuzzer, path: string): { path: string; raw: boolean } {
  const [pathname, query] = path.split("?") as [string, string | undefined];
  const q = query === undefined ? "" : `?${query}`;
  return fuzz.pick<() => { path: string; raw: boolean }>([
    () => ({ path: `/v1/foo/..${pathname.slice(pathname.indexOf("/", 1))}${q}`, raw: true }),
    () => ({ path: `${pathname.replace("/", "/./")}${q}`, raw: true }),
    () => ({ path: `/x/%2e%2e${pathname}${q}`, raw: true }),
    () => ({ path: `${pathname}/..${q}`, raw: true }),
    () => ({ path: `/${pathname}${q}`, raw: true }),
    () => ({ path: `${pathname}/${q}`, raw: false }),
    () => ({ path: `${pathname.toUpperCase()}${q}`, raw: false }),
    () => ({ path: `${pathname}%00${q}`, raw: false }),
    () => ({ path: `${pathname}?limit=1e400&offset=-1&from=%00&to=9999-99-99&days=${"9".repeat(400)}&top=-0&provider=%00&id=%E0%A4%A`, raw: false }),
    () => ({ path: `${pathname}?${"a=1&".repeat(500)}`, raw: false }),
    () => ({ path: `${pathname}?${query ? `${query}&` : ""}__proto__=1&constructor=x&toString=&kind=${fuzz.pick(HOSTILE_KEYS)}&provider=__proto__&__proto__[polluted]=1`, raw: false }),
    () => ({ path: `${pathname}${"/x".repeat(fuzz.int(2000))}`, raw: false }),
  ])();
}

/** Headers: credentials in odd shapes, odd content types, large values within the runtime's header limit. */
export function mutateHeaders(fuzz: Fuzzer, headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  const token = out.authorization?.replace(/^Bearer /, "") ?? "";
  const mutations: Array<() => void> = [
    () => delete out.authorization,
    () => (out.authorization = "Bearer"),
    () => (out.authorization = "Bearer    "),
    () => (out.authorization = `Basic ${btoa("a:b")}`),
    () => (out.authorization = `Bearer brk_${"a".repeat(fuzz.int(40))}.${"b".repeat(fuzz.int(60))}`),
    () => (out.authorization = `Bearer ${token}x`),
    () => (out.authorization = `Bearer ${"\u00ff".repeat(100)}`),
    () => (out.authorization = `Bearer ${"A".repeat(8000)}`),
    () => ((out["x-api-key"] = token), delete out.authorization),
    () => ((out["x-goog-api-key"] = "brk_%00.%00"), delete out.authorization),
    () => (out["content-type"] = "text/plain"),
    () => (out["content-type"] = "application/json; charset=utf-16"),
    () => (out["content-type"] = "multipart/form-data; boundary=x"),
    () => (out["content-type"] = "application/x-www-form-urlencoded"),
    () => delete out["content-type"],
    () => (out["x-request-id"] = fuzz.pick(["", "\u00e9\u00e9", "x".repeat(5000), "a b", "%00"])),
    () => (out["x-padding"] = "p".repeat(8000)),
    () => (out.accept = "text/event-stream"),
  ];
  const count = 1 + fuzz.int(2);
  for (let i = 0; i < count; i++) fuzz.pick(mutations)();
  return out;
}
