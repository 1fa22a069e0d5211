import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { headingTexts, proseLines, readRepositoryFile, ROOT } from "./markdown";

/**
 * Source comments cite documentation as a file and a quoted heading:
 * `README "Layout"`, `docs/operations.md "Backup and restore"`,
 * `src/admission/README.md, "The wallet: cost ceilings and leases"`. Each citation names a file
 * that exists and a heading of that file (or a paragraph's bold lead-in, `**The ledger**`,
 * which the folder READMEs use as small headings), so a moved or renamed section cannot
 * leave a comment pointing at nothing. A citation may wrap across comment lines.
 */
const CITATION = /(?<![\w/.-])((?:[\w.-]+\/)*[\w.-]+\.md|README),? "([^"\n]+)"/g;

/** The text of a source file with comment line breaks (`\n * `, `\n // `) folded to spaces. */
export function foldComments(text: string): string {
  return text.replace(/\s*\n\s*(?:\*(?!\/)|\/\/)?\s*/g, " ");
}

export function citations(text: string): Array<{ file: string; heading: string }> {
  return [...foldComments(text).matchAll(CITATION)].map((match) => ({ file: match[1] === "README" ? "README.md" : match[1]!, heading: match[2]! }));
}

function sourceFiles(): string[] {
  return readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") || file.endsWith(".md"))
    .map((file) => join("src", file));
}

function plain(heading: string): string {
  return heading.replaceAll("`", "").trim();
}

/** A file's headings and the bold lead-ins of its paragraphs and list items, as plain text. */
function citable(markdown: string): string[] {
  const leadIns = proseLines(markdown)
    .map(({ line }) => /^\s*(?:[-*]\s+)?\*\*([^*]+?)[.:]?\*\*/.exec(line)?.[1])
    .filter((text): text is string => text !== undefined);
  return [...headingTexts(markdown), ...leadIns].map(plain);
}

describe("documentation cited from src/", () => {
  test("every citation names an existing file and one of its headings", () => {
    const wrong: string[] = [];
    let count = 0;
    for (const file of sourceFiles()) {
      for (const { file: cited, heading } of citations(readFileSync(join(ROOT, file), "utf8"))) {
        count++;
        if (!existsSync(join(ROOT, cited))) {
          wrong.push(`${file}: ${cited} "${heading}": no such file`);
          continue;
        }
        const headings = citable(readRepositoryFile(cited));
        if (!headings.includes(plain(heading))) wrong.push(`${file}: ${cited} "${heading}": no such heading`);
      }
    }
    expect(wrong).toEqual([]);
    expect(count).toBeGreaterThan(40);
  });

  test("no comment cites a document outside the repository (\"reference §…\")", () => {
    const outside = sourceFiles().filter((file) => /\breference(?:'s)? §|\(§\d|\bDESIGN(?:\.md)?\b/.test(readFileSync(join(ROOT, file), "utf8")));
    expect(outside).toEqual([]);
  });

  test("citations are found across wrapped comment lines (a check of the check)", () => {
    const text = ' * errors as `{ error }` (docs/api/credentials.md\n * "Credentials and scopes"; and README "Layout").\n// (src/db/README.md, "Partitions")';
    expect(citations(text)).toEqual([
      { file: "docs/api/credentials.md", heading: "Credentials and scopes" },
      { file: "README.md", heading: "Layout" },
      { file: "src/db/README.md", heading: "Partitions" },
    ]);
  });
});
