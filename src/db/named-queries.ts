import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Sql } from "./connect-database";

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

/**
 * Has PostgreSQL parse and describe every named statement once, at boot, after the
 * migrations: a syntax error, a misspelt table or column, or an empty statement stops
 * the start with every refused statement named, instead of failing the first request
 * that reaches it. Nothing is executed.
 */
export async function prepareNamedQueries(sql: Sql, directory = QUERIES_DIR): Promise<void> {
  const queries = loadNamedQueries(directory);
  const refused: string[] = [];
  await Promise.all(
    [...queries].map(async ([name, text]) => {
      if (text === "") {
        refused.push(`${name}: the statement is empty`);
        return;
      }
      try {
        await sql.unsafe(text, [], { prepare: true }).describe();
      } catch (error) {
        refused.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
  if (refused.length > 0) throw new Error(`named queries PostgreSQL refuses (sql/queries): ${refused.sort().join("; ")}`);
  if (directory === QUERIES_DIR) cache = queries;
}

/** The text of one named statement; throws at first use if the name is unknown. */
export function query(name: string): string {
  cache ??= loadNamedQueries();
  const text = cache.get(name);
  if (text === undefined) throw new Error(`no named query "${name}" in sql/queries`);
  return text;
}
