import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(dir, file));
}

/**
 * An exported type or interface that nothing names, in its own file or anywhere in src/ or
 * test/, is dead weight a reader has to check before trusting: it goes. Names are matched
 * as words, so a re-export counts as a use (an index that re-exports a type nobody imports
 * is not caught).
 */
test("every exported type and interface in src/ is named somewhere besides its declaration", () => {
  const files = [...tsFiles(join(ROOT, "src")), ...tsFiles(join(ROOT, "test"))];
  const texts = new Map(files.map((file) => [file, readFileSync(file, "utf8")]));
  // Every word counted once, in one pass: a regular expression per exported name over the
  // whole tree took seconds on a loaded machine.
  const words = new Map<string, number>();
  for (const text of texts.values()) for (const [word] of text.matchAll(/\w+/g)) words.set(word, (words.get(word) ?? 0) + 1);
  const unused: string[] = [];
  for (const [file, text] of texts) {
    if (!file.startsWith(join(ROOT, "src"))) continue;
    for (const match of text.matchAll(/^export (?:type|interface) (\w+)/gm)) {
      const name = match[1]!;
      const uses = words.get(name) ?? 0;
      if (uses <= 1) unused.push(`${relative(ROOT, file)}: ${name}`);
    }
  }
  expect(unused).toEqual([]);
});
