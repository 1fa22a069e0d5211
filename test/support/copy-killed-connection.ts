/**
 * Child process for test/db/copy-rows.test.ts: `bun copy-killed-connection.ts <database url>`.
 * Starts a large COPY into `copied`, terminates its backend from a second connection
 * halfway, and prints one JSON line: how the COPY ended ("rejected", "committed" or "hung")
 * and every error that escaped to the process and was not a database connection loss. The
 * connection-loss guard is installed as src/main.ts installs it; a test runner keeps its
 * own handlers for uncaught errors, so this runs in a process of its own.
 */
import postgres from "postgres";
import type { Sql } from "../../src/db/connect-database";
import { installConnectionLossGuard } from "../../src/db/connection-loss-guard";
import { copyInto, copyLineWriter } from "../../src/db/copy-rows";

const url = process.argv[2];
if (url === undefined) throw new Error("usage: bun copy-killed-connection.ts <database url>");
const escaped: string[] = [];
installConnectionLossGuard(() => escaped.push("a non-connection error escaped"));
const line = copyLineWriter<{ id: string; n: number; flag: boolean; tags: string[]; doc: unknown; at: string }>(["id", "n", "flag", "tags", "doc", "at"], { tags: "text[]", doc: "json" });
const lines = Array.from({ length: 60_000 }, (_, i) => line({ id: `killed${i}`, n: i, flag: true, tags: [], doc: { pad: "z".repeat(300) }, at: "2026-11-22T00:00:00.000Z" }));

const victim = postgres(url, { max: 1, onnotice: () => {} }) as unknown as Sql;
const killer = postgres(url, { max: 1, onnotice: () => {} }) as unknown as Sql;
const [{ pid }] = (await victim.unsafe("select pg_backend_pid() as pid")) as unknown as [{ pid: number }];
const copying = victim.begin((tx) => copyInto(tx as unknown as Sql, "copied", ["id", "n", "flag", "tags", "doc", "at"], lines));
await Bun.sleep(5);
await killer.unsafe("select pg_terminate_backend($1)", [pid]);
const outcome = await Promise.race([copying.then(() => "committed", () => "rejected"), Bun.sleep(10_000).then(() => "hung")]);
await victim.end({ timeout: 1 }).catch(() => {});
await Bun.sleep(200); // stray errors arrive from timers
await killer.end({ timeout: 1 });
console.log(JSON.stringify({ outcome, escaped }));
process.exit(0);
