import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * The README's "Layout" section is a map of the tree: every folder under src/ and every
 * top-level folder of the repository is named there, and every folder it names exists.
 * test/ mirrors src/ as its entry says: a folder of tests is named like the src/ folder it
 * tests, or is one of the kinds of test the entry names.
 */
const ROOT = resolve(import.meta.dir, "..");

/** The lines of the first code block under `## Layout`. */
export function layoutBlock(readme: string): string[] {
  const section = readme.split(/^## /m).find((part) => part.startsWith("Layout\n"));
  if (!section) throw new Error('README has no "## Layout" section');
  const block = /```[^\n]*\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README "Layout" has no code block');
  return block[1]!.split("\n");
}

/**
 * Folders named in the block: a line starting (at column 0) with `name/` is a top-level
 * folder; a line indented by exactly two spaces starting with `name/` is a folder directly
 * under the top-level folder above it. Returns paths relative to the repository.
 */
export function namedFolders(lines: string[]): string[] {
  const named: string[] = [];
  let top: string | undefined;
  for (const line of lines) {
    const topMatch = /^([A-Za-z0-9_.-]+)\/(?:\s|$)/.exec(line);
    if (topMatch) {
      top = topMatch[1]!;
      named.push(top);
      continue;
    }
    const childMatch = /^ {2}([A-Za-z0-9_.-]+)\/(?:\s|$)/.exec(line);
    if (childMatch) {
      if (!top) throw new Error(`Layout names ${childMatch[1]}/ before any top-level folder`);
      named.push(`${top}/${childMatch[1]}`);
    }
  }
  return named;
}

/**
 * The text of one top-level folder's entry in the block: its line and the lines under it,
 * up to the next line that starts at column 0.
 */
export function entryOf(lines: string[], folder: string): string {
  const start = lines.findIndex((line) => line.startsWith(`${folder}/`));
  if (start < 0) throw new Error(`Layout has no entry for ${folder}/`);
  const end = lines.findIndex((line, i) => i > start && /^\S/.test(line));
  return lines.slice(start, end < 0 ? lines.length : end).join("\n");
}

/**
 * Folders of test/ that are kinds of test rather than code areas, so have no src/ folder of
 * their name; the README's test/ entry names each.
 */
const TEST_KINDS = ["bench", "deploy", "docs", "fixtures", "fuzz", "policy-enforcement", "replay", "server", "support"];
/** An area's own setup and data, beside its tests, at any depth. */
const AREA_SETUP = ["support", "fixtures"];

/**
 * The folders under test/ (paths relative to it) that hold test code but are not named like a
 * folder under src/: neither a kind of test (with all below it) nor an area's own setup.
 */
export function unmirroredTestFolders(testFolders: string[], srcFolders: Set<string>, kinds: string[] = TEST_KINDS): string[] {
  return testFolders.filter((path) => {
    const parts = path.split("/");
    if (kinds.includes(parts[0]!)) return false;
    if (AREA_SETUP.includes(parts[parts.length - 1]!)) return false;
    return !srcFolders.has(path);
  });
}

/** Every folder below `dir` (relative to it) that holds a .ts file of its own. */
function foldersWithCode(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((path) => path.endsWith(".ts") && path.includes("/"))
    .map((path) => path.slice(0, path.lastIndexOf("/")))
    .filter((path, i, all) => all.indexOf(path) === i)
    .sort();
}

function folders(dir: string): string[] {
  return readdirSync(dir).filter((name) => !name.startsWith(".") && name !== "node_modules" && statSync(join(dir, name)).isDirectory());
}

describe("README Layout", () => {
  const named = namedFolders(layoutBlock(readFileSync(join(ROOT, "README.md"), "utf8")));

  test("names every folder under src/", () => {
    const missing = folders(join(ROOT, "src")).map((name) => `src/${name}`).filter((path) => !named.includes(path));
    expect(missing).toEqual([]);
  });

  test("names every top-level folder of the repository", () => {
    const missing = folders(ROOT).filter((name) => !named.includes(name));
    expect(missing).toEqual([]);
  });

  test("names only folders that exist", () => {
    const absent = named.filter((path) => !existsSync(join(ROOT, path)) || !statSync(join(ROOT, path)).isDirectory());
    expect(absent).toEqual([]);
  });

  test("test/ mirrors src/: every folder of tests is named like a folder under src/, or is a kind of test the test/ entry names", () => {
    const srcFolders = new Set(
      readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" }).filter((path) => statSync(join(ROOT, "src", path)).isDirectory()),
    );
    expect(unmirroredTestFolders(foldersWithCode(join(ROOT, "test")), srcFolders)).toEqual([]);
    const entry = entryOf(layoutBlock(readFileSync(join(ROOT, "README.md"), "utf8")), "test");
    expect(TEST_KINDS.filter((kind) => !entry.includes(`${kind}/`))).toEqual([]);
  });

  test("the mirror check finds what it is meant to (a check of the check)", () => {
    const src = new Set(["http", "management", "management/keys", "protocols", "protocols/openai-chat"]);
    const tests = ["http", "management/keys", "management/nowhere", "routes", "protocols/openai-chat", "translation/support", "workers/fixtures", "replay/clients", "server"];
    expect(unmirroredTestFolders(tests, src)).toEqual(["management/nowhere", "routes"]);
    expect(entryOf(["src/", "  ir/  types", "test/  a", "    b/ c", "sql/"], "test")).toBe("test/  a\n    b/ c");
  });

  test("the parser finds what it is meant to (a check of the check)", () => {
    const lines = ["src/", "  main.ts", "  ir/   types", "  pipeline/  stages:", "                  run-inference.ts", "sql/", "  migrations/  numbered"];
    expect(namedFolders(lines)).toEqual(["src", "src/ir", "src/pipeline", "sql", "sql/migrations"]);
  });
});
