import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src");

/** Where error statuses are written down: the error table, and the helpers of the kinds it gives two statuses. */
const TABLES = ["src/errors/error-table.ts", "src/errors/api-error.ts", "src/ir/ir-error.ts"];
/** The console answers people with HTML pages, not with an error family of the API. */
const HTML_PAGES = "src/console/";

function sources(): { file: string; text: string }[] {
  return readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => ({ file: relative(ROOT, join(SRC, file)), text: readFileSync(join(SRC, file), "utf8") }));
}

/** The text of a call's arguments from its opening parenthesis, string and template contents blanked out. */
function callArguments(text: string, open: number): string {
  let depth = 0;
  let out = "";
  for (let index = open; index < text.length; index++) {
    const char = text[index]!;
    if (char === '"' || char === "'" || char === "`") {
      const end = text.indexOf(char, index + 1);
      out += `${char}${char}`;
      index = end === -1 ? text.length : end;
      continue;
    }
    out += char;
    if (char === "(") depth++;
    else if (char === ")" && --depth === 0) return out;
  }
  return out;
}

test("no inference error is given a status by its caller: irError takes the status from the error table", () => {
  const offenders: string[] = [];
  for (const { file, text } of sources()) {
    if (TABLES.includes(file)) continue;
    for (const match of text.matchAll(/\birError\(/g)) {
      const args = callArguments(text, match.index + match[0].length - 1);
      if (/\bstatus\b/.test(args)) offenders.push(`${file}: irError${args}`);
    }
  }
  expect(offenders).toEqual([]);
});

test("no error status is written as a literal outside the two error tables", () => {
  const offenders: string[] = [];
  for (const { file, text } of sources()) {
    if (TABLES.includes(file) || file.startsWith(HTML_PAGES)) continue;
    for (const match of text.matchAll(/\bstatus:\s*[45]\d\d\b/g)) offenders.push(`${file}: ${match[0]}`);
  }
  expect(offenders).toEqual([]);
});
