/**
 * Migrations run while the previous version still serves (docs/operations.md "Upgrading while the old
 * version runs"): during a rolling upgrade the first new instance applies them, and old
 * instances keep running against the new schema until they are replaced. So a migration
 * must be additive — new tables, new nullable columns or columns with a default, new
 * functions and indexes — or say how the change is split so that old code never meets it.
 *
 * This test reads every migration numbered above BASELINE and refuses one that drops,
 * renames, retypes, tightens (NOT NULL, constraints) or blocks writes to (index builds,
 * truncation) something that already existed, unless the file carries the marker line
 *
 *   -- two-step: <why the version still running is unaffected: which earlier release stopped using it, …>
 *
 * Migrations up to BASELINE predate the rule and were applied with downtime-free starts
 * only on fresh databases; they are not rewritten (a recorded migration never changes).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const MIGRATIONS = resolve(import.meta.dir, "../../sql/migrations");
/** The newest migration when the rule was introduced. */
const BASELINE = 24;
const MARKER = /^--\s*two-step:\s*(\S.{19,})$/m;

/**
 * The SQL with comments, string literals and dollar-quoted bodies blanked, lower-cased, one
 * space between words. One left-to-right scan, as PostgreSQL's lexer reads it: an
 * apostrophe in a comment opens no string, and `--` in a string is no comment.
 */
function codeOnly(sql: string): string {
  let code = "";
  let at = 0;
  while (at < sql.length) {
    const rest = sql.slice(at);
    const skipped =
      /^--[^\n]*/.exec(rest) ??
      /^\/\*[\s\S]*?\*\//.exec(rest) ??
      /^'(?:[^']|'')*'/.exec(rest) ??
      /^\$([A-Za-z_][A-Za-z0-9_]*)?\$[\s\S]*?\$\1\$/.exec(rest);
    if (skipped) {
      code += skipped[0].startsWith("'") || skipped[0].startsWith("$") ? " 'text' " : " ";
      at += skipped[0].length;
    } else {
      code += sql[at];
      at++;
    }
  }
  return code.toLowerCase().replace(/\s+/g, " ");
}

const IDENTIFIER = String.raw`(?:if exists |if not exists |only )?("[^"]+"|[a-z_][a-z0-9_.]*)`;
const unquote = (name: string) => name.replace(/"/g, "").replace(/^public\./, "");

/** Statements that old code may not survive, each with the reason; empty when the migration is additive. */
export function unsafeStatements(sql: string): string[] {
  const statements = codeOnly(sql).split(";").map((statement) => statement.trim()).filter(Boolean);
  const createdHere = new Set(
    statements.flatMap((statement) => {
      const created = new RegExp(String.raw`^create (?:unlogged )?table ${IDENTIFIER}`).exec(statement);
      return created ? [unquote(created[1]!)] : [];
    }),
  );
  const problems: string[] = [];
  const flag = (statement: string, reason: string) => problems.push(`${reason}: ${statement.slice(0, 120)}`);
  for (const statement of statements) {
    const drop = /^drop (table|view|materialized view|type|domain|function|procedure|schema|sequence|trigger|index|extension|policy|rule)\b/.exec(statement);
    if (drop) flag(statement, `drops a ${drop[1]} old code may use`);
    if (/^truncate\b/.test(statement)) flag(statement, "empties a table");
    if (/^alter (table|type|index|view|sequence|function|schema)\b.* rename\b/.test(statement)) flag(statement, "renames what old code names");

    const index = new RegExp(String.raw`^create (unique )?index (?:concurrently )?(?:if not exists )?(?:[a-z_][a-z0-9_]* )?on ${IDENTIFIER}`).exec(statement);
    if (index && !createdHere.has(unquote(index[2]!))) {
      flag(statement, index[1] ? "adds a uniqueness old code may violate, and blocks writes while it builds" : "blocks writes to an existing table while the index builds");
    }

    const altered = new RegExp(String.raw`^alter table ${IDENTIFIER} (.*)$`).exec(statement);
    if (!altered || createdHere.has(unquote(altered[1]!))) continue;
    // An ALTER TABLE carries comma-separated actions; commas inside parentheses belong to one action.
    for (const action of splitActions(altered[2]!)) {
      if (/^drop (?!not null\b)/.test(action)) flag(statement, `drops what old code may use (${action.slice(0, 40)})`);
      if (/^alter (?:column )?\S+ drop (?!not null\b)/.test(action)) flag(statement, "drops a column's default or identity that old code's inserts rely on");
      if (/^alter (?:column )?\S+ (?:set data )?type\b/.test(action)) flag(statement, "changes a column's type");
      if (/^alter (?:column )?\S+ set not null\b/.test(action)) flag(statement, "makes a column NOT NULL that old code may leave empty");
      if (/^add (?:column )?(?:if not exists )?(?!constraint\b|primary\b|unique\b|check\b|foreign\b|exclude\b)\S+ .*\bnot null\b/.test(action) && !/\bdefault\b/.test(action)) {
        flag(statement, "adds a NOT NULL column without a default: old code's inserts fail");
      }
      if (/^add (?:constraint \S+ )?(primary key|unique|check|foreign key|exclude)\b/.test(action)) flag(statement, "adds a constraint old code may violate");
    }
  }
  return problems;
}

function splitActions(actions: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const character of actions) {
    if (character === "(") depth++;
    if (character === ")") depth--;
    if (character === "," && depth === 0) {
      parts.push(current.trim());
      current = "";
    } else current += character;
  }
  parts.push(current.trim());
  return parts.filter(Boolean);
}

const migrations = readdirSync(MIGRATIONS)
  .filter((file) => /^\d{4}_.+\.sql$/.test(file))
  .sort()
  .map((file) => ({ file, version: Number(file.slice(0, 4)), sql: readFileSync(join(MIGRATIONS, file), "utf8") }));

describe("migrations are safe to apply while the previous version still runs", () => {
  test("every migration after the baseline is additive, or carries a two-step marker saying why the old version is unaffected", () => {
    const refused = migrations
      .filter((migration) => migration.version > BASELINE && !MARKER.test(migration.sql))
      .flatMap((migration) => unsafeStatements(migration.sql).map((problem) => `${migration.file}: ${problem}`));
    expect(refused).toEqual([]);
  });

  test("the check finds what it looks for (a check of the check), in the project's own older migrations too", () => {
    const flagged = (sql: string) => unsafeStatements(sql).length;
    // Unsafe under old code.
    expect(flagged("alter table accounts drop column email;")).toBe(1);
    expect(flagged("ALTER TABLE accounts DROP email")).toBe(1);
    expect(flagged("alter table accounts rename column email to mail;")).toBe(1);
    expect(flagged("alter table accounts rename to users;")).toBe(1);
    expect(flagged("alter table accounts alter column email type varchar(100);")).toBe(1);
    expect(flagged("alter table accounts alter column email set not null;")).toBe(1);
    expect(flagged("alter table accounts add column tier text not null;")).toBe(1);
    expect(flagged("alter table accounts add constraint tier_known check (tier in ('a', 'b'));")).toBe(1);
    expect(flagged("alter table accounts alter column tier drop default;")).toBe(1);
    expect(flagged("drop table wallets;")).toBe(1);
    expect(flagged("drop function admission_admit(text);")).toBe(1);
    expect(flagged("truncate requests;")).toBe(1);
    expect(flagged("create index requests_by_model on requests (model_id);")).toBe(1);
    expect(flagged("create unique index keys_by_name on api_keys (namespace_id, name);")).toBe(1);
    // Additive: safe under old code.
    expect(flagged("create table exports (id text primary key, account_id text not null, created_at timestamptz not null default now());")).toBe(0);
    expect(flagged("create table t (id int); create index t_by_id on t (id); alter table t add constraint t_pk primary key (id);")).toBe(0);
    expect(flagged("alter table accounts add column tier text;")).toBe(0);
    expect(flagged("alter table accounts add column tier text not null default 'free';")).toBe(0);
    expect(flagged("alter table accounts alter column tier drop not null;")).toBe(0);
    expect(flagged("create or replace function f() returns int language sql as $$ select 1 $$;")).toBe(0);
    expect(flagged("-- drop table wallets;\ncomment on table accounts is 'we never drop table wallets';")).toBe(0);
    // Older migrations that would not have passed: why the baseline exists.
    const older = (prefix: string) => unsafeStatements(migrations.find((migration) => migration.file.startsWith(prefix))!.sql);
    expect(older("0022_")).toContainEqual(expect.stringContaining("drops what old code may use (drop constraint byok_keys_pkey)"));
    expect(older("0024_")).toContainEqual(expect.stringContaining("drops a function old code may use"));
  });

  test("the marker must explain itself", () => {
    expect(MARKER.test("-- two-step: release 14 stopped reading accounts.legacy_plan; this drops it\ndrop table x;")).toBe(true);
    expect(MARKER.test("-- two-step:\ndrop table x;")).toBe(false);
    expect(MARKER.test("-- two-step: ok\ndrop table x;")).toBe(false);
  });
});
