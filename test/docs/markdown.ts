import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/** The repository's root. */
export const ROOT = resolve(import.meta.dir, "../..");

/** README.md and every Markdown file under docs/, as paths relative to the root. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md"))
    .map((file) => relative(ROOT, join(ROOT, "docs", file)));
  return ["README.md", ...docs.sort()];
}

export function readRepositoryFile(path: string): string {
  return readFileSync(join(ROOT, path), "utf8");
}

/** The lines of a Markdown text outside fenced code blocks, with their 1-based numbers. */
export function proseLines(markdown: string): Array<{ line: string; number: number }> {
  const out: Array<{ line: string; number: number }> = [];
  let fence: string | undefined;
  markdown.split("\n").forEach((line, index) => {
    const opener = /^(`{3,}|~{3,})/.exec(line);
    if (opener) {
      if (fence === undefined) fence = opener[1];
      else if (line.startsWith(fence)) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line, number: index + 1 });
  });
  return out;
}

/** The text of every ATX heading (`#` to `######`), in order. */
export function headingTexts(markdown: string): string[] {
  return proseLines(markdown)
    .map(({ line }) => /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1])
    .filter((text): text is string => text !== undefined);
}

/**
 * GitHub's anchor for a heading: lower case, inline code marks and punctuation dropped
 * (letters, digits, `_`, `-` and spaces stay), spaces become hyphens.
 */
export function headingSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a file's headings define, a repeated one numbered `-1`, `-2`… as GitHub does. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const text of headingTexts(markdown)) {
    const slug = headingSlug(text);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    out.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return out;
}

/** Inline links and images `[text](target)` outside code, with their line numbers. */
export function links(markdown: string): Array<{ target: string; line: number }> {
  const out: Array<{ target: string; line: number }> = [];
  for (const { line, number } of proseLines(markdown)) {
    // Inline code spans are not links.
    const text = line.replace(/`[^`]*`/g, "``");
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: match[1]!, line: number });
  }
  return out;
}

/** Fenced code blocks with their info string (`ts sdk-example`), in order. */
export function fencedBlocks(markdown: string): Array<{ info: string; code: string }> {
  const out: Array<{ info: string; code: string }> = [];
  for (const match of markdown.matchAll(/^```([^\n`]*)\n([\s\S]*?)^```\s*$/gm)) out.push({ info: match[1]!.trim(), code: match[2]! });
  return out;
}
