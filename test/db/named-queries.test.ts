import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { loadNamedQueries } from "../../src/db/named-queries";
import { createTestDatabase } from "../support/test-database";
import { startTestServer } from "../support/test-server";

const QUERIES = new URL("../../sql/queries/", import.meta.url).pathname;
const SRC = new URL("../../src/", import.meta.url).pathname;

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A copy of sql/queries with `file` edited by `edit`. */
function queriesWith(file: string, edit: (text: string) => string): string {
  const directory = mkdtempSync(join(tmpdir(), "queries-")) + "/";
  cpSync(QUERIES, directory, { recursive: true });
  const before = readFileSync(directory + file, "utf8");
  const after = edit(before);
  expect(after).not.toBe(before);
  writeFileSync(directory + file, after);
  return directory;
}

async function bootWith(namedQueriesDir: string): Promise<unknown> {
  const database = await createTestDatabase();
  cleanups.push(database.drop);
  try {
    const server = await startTestServer({}, database, { namedQueriesDir });
    cleanups.push(() => server.server.shutdown());
    return undefined;
  } catch (error) {
    return error;
  }
}

function sourceFiles(directory: string): string[] {
  return sourcePaths(directory).map((file) => readFileSync(join(directory, file), "utf8"));
}

function sourcePaths(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
}

describe("named queries", () => {
  test("a misspelt column in a named query stops the start, naming the statement, before any request runs it", async () => {
    const directory = queriesWith("namespaces.sql", (text) => text.replace("select id, account_id, name, created_at from namespaces", "select id, acount_id, name, created_at from namespaces"));
    const error = await bootWith(directory);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/findLiveNamespace: column "acount_id" does not exist/);
  }, 30_000);

  test("a syntax error and an empty statement stop the start too, every refused statement named", async () => {
    const directory = queriesWith("namespaces.sql", (text) => text.replace("select id from namespaces", "selct id from namespaces") + "\n-- name: nothingHere\n\n");
    const error = await bootWith(directory);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/oldestLiveNamespace: syntax error/);
    expect((error as Error).message).toMatch(/nothingHere: the statement is empty/);
  }, 30_000);

  test("the shipped named queries pass the boot check", async () => {
    expect(await bootWith(QUERIES)).toBeUndefined();
  }, 30_000);

  test("every name the code runs is defined in sql/queries, and every defined statement is run somewhere", () => {
    const defined = new Set(loadNamedQueries().keys());
    const sources = sourceFiles(SRC);
    const referenced = new Set<string>();
    for (const text of sources) {
      for (const match of text.matchAll(/\brunQuery(?:<[\s\S]*?>)?\(\s*[\w.]+\s*,\s*"(\w+)"/g)) referenced.add(match[1]!);
    }
    expect(referenced.size).toBeGreaterThan(50);
    expect([...referenced].filter((name) => !defined.has(name))).toEqual([]);
    const everything = sources.join("\n");
    expect([...defined].filter((name) => !everything.includes(`"${name}"`))).toEqual([]);
  });

  test("statements are named only by the typed wrappers: no code outside src/db/queries calls runQuery or runCommand", () => {
    const callers = sourcePaths(SRC).filter((file) => !file.startsWith("db/queries/") && /\b(?:runQuery|runCommand)\b/.test(readFileSync(join(SRC, file), "utf8")));
    expect(callers.map((file) => `src/${file}`)).toEqual([]);
  });

  test("no code outside src/db writes SQL: no tagged-template or unsafe statement, every one goes through a named query", () => {
    const offenders: string[] = [];
    for (const file of sourcePaths(SRC)) {
      if (file.startsWith("db/")) continue;
      const text = readFileSync(join(SRC, file), "utf8");
      for (const [line, content] of text.split("\n").entries()) {
        if (/^\s*(?:\*|\/\/|\/\*)/.test(content)) continue;
        // A postgres.js call: sql`…`, tx`…`, this.sql<Row[]>`…`, deps.sql.unsafe(…).
        if (/\b(?:sql|tx|transaction)(?:<[^`]*>)?`|\.unsafe\(/.test(content)) offenders.push(`src/${file}:${line + 1}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
