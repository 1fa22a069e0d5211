import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * The README's "Layout" section is a map of the tree: every folder under src/ and every
 * top-level folder of the repository is named there, and every folder it names exists.
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

  test("the parser finds what it is meant to (a check of the check)", () => {
    const lines = ["src/", "  main.ts", "  ir/   types", "  pipeline/  stages:", "                  run-inference.ts", "sql/", "  migrations/  numbered"];
    expect(namedFolders(lines)).toEqual(["src", "src/ir", "src/pipeline", "sql", "sql/migrations"]);
  });
});
