import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const QUERIES_DIR = fileURLToPath(new URL("../../sql/queries/", import.meta.url));

/**
 * Reads sql/queries/*.sql into a map of named statements. A statement starts at a
 * `-- name: <name>` line and runs to the next one. Typed wrappers in
 * src/db/queries/ execute them with parameters only — never string-built SQL.
 */
export function loadNamedQueries(directory = QUERIES_DIR): Map<string, string> {
  const queries = new Map<string, string>();
  for (const file of readdirSync(directory).filter((f) => f.endsWith(".sql")).sort()) {
    let name: string | undefined;
    let lines: string[] = [];
    const flush = () => {
      if (name === undefined) return;
      const text = lines.join("\n").trim().replace(/;\s*$/, "");
      if (queries.has(name)) throw new Error(`duplicate query name ${name} in ${file}`);
      queries.set(name, text);
    };
    for (const line of readFileSync(directory + file, "utf8").split("\n")) {
      const match = /^--\s*name:\s*([A-Za-z0-9_]+)\s*$/.exec(line);
      if (match) {
        flush();
        name = match[1];
        lines = [];
      } else if (!line.trimStart().startsWith("--")) {
        lines.push(line);
      }
    }
    flush();
  }
  return queries;
}

let cache: Map<string, string> | undefined;

/** The text of one named statement; throws at first use if the name is unknown. */
export function query(name: string): string {
  cache ??= loadNamedQueries();
  const text = cache.get(name);
  if (text === undefined) throw new Error(`no named query "${name}" in sql/queries`);
  return text;
}
