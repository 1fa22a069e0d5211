/**
 * `npx bun test/bench/retained.ts`: what one request keeps alive while its metering rows
 * wait to be written, on a server's main thread: heap bytes, bytes reported from outside
 * the heap's blocks, and cells by type, per waiting request.
 *
 * Rows wait a flush interval or longer (thousands of them when PostgreSQL lags), so what
 * they keep reachable survives young collections, is promoted and grows the heap: at
 * thousands of requests a second it weighs on the peak RSS far more than what a request
 * drops at once (allocations.ts counts that). Each server runs with its metering flush
 * interval at ten minutes and retained-probe.ts preloaded; after WARM requests the probe
 * collects fully and reads the heap, COUNT more requests are sent, and it collects and
 * reads again: the difference is what the COUNT waiting requests keep. The server's own
 * gauge must show their rows still waiting, or the count is refused. A measurement, not a
 * test.
 *
 *   env: VARIANTS      label:JSON-env pairs separated by ";" (default: one default server;
 *                      `{"SWITCHYARD_ROOT":"<dir>"}` runs another checkout, for a before/after)
 *        STREAM=1      streamed chat completions
 *        COUNT, WARM   requests counted (800) and sent before (100): together under the
 *                      write buffer's 1,000 rows, where it would flush at once
 *        SNAPSHOT_DIR  also write a V8-format heap snapshot at each read and print what the
 *                      COUNT requests added by node type and name (strings by their shape)
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanupAll } from "./children";
import { chatTarget, sendRequests } from "./load";
import { signalProbe } from "./probe-signal";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard, type SwitchyardProcess } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";
const HERE = import.meta.dir;
const COUNT = Number(process.env.COUNT ?? 800);
const WARM = Number(process.env.WARM ?? 100);
const STREAM = process.env.STREAM === "1";
const LANES = 4;
/** The write buffer flushes a table at once when it holds this many rows (WriteBuffer's maxBatchRows). */
const FLUSH_AT_ROWS = 1_000;
const TOP = 20;

interface HeapRead {
  heapSize: number;
  extraMemory: number;
  cells: Record<string, number>;
}

async function read(server: SwitchyardProcess, file: string): Promise<HeapRead> {
  // Two full collections of a grown heap take longer than a count's probe.
  return JSON.parse(await signalProbe(server.pid, file, server.mode, 30_000)) as HeapRead;
}

async function bufferedRequestRows(url: string): Promise<number> {
  const text = await fetch(`${url}/metrics`).then((response) => response.text());
  const match = /^switchyard_buffered_rows\{table="requests"\} (\d+)/m.exec(text);
  return Number(match?.[1] ?? Number.NaN);
}

/** Nodes of a V8-format heap snapshot counted by type and name, with their bytes; strings by shape (digits as 9, ids and UUIDs folded). */
function snapshotNodes(file: string): Map<string, { count: number; bytes: number }> {
  const snapshot = JSON.parse(readFileSync(file, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((field) => fields.indexOf(field)) as [number, number, number];
  const nodes = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[snapshot.nodes[i + typeAt]!]!;
    let name = snapshot.strings[snapshot.nodes[i + nameAt]!]!;
    if (type.includes("string")) {
      name = name
        .slice(0, 80)
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
        .replace(/[a-z0-9]{16,}/g, "<id>")
        .replace(/\d/g, "9");
    }
    const key = `${type} ${name}`;
    const entry = nodes.get(key) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snapshot.nodes[i + sizeAt]!;
    nodes.set(key, entry);
  }
  return nodes;
}

function printSnapshotDiff(before: string, after: string): void {
  const [a, b] = [snapshotNodes(before), snapshotNodes(after)];
  const added = [...b]
    .map(([key, entry]) => ({ key, count: (entry.count - (a.get(key)?.count ?? 0)) / COUNT, bytes: (entry.bytes - (a.get(key)?.bytes ?? 0)) / COUNT }))
    .filter((row) => row.count >= 0.5)
    .sort((x, y) => y.bytes - x.bytes);
  console.log(`\nHeap snapshot nodes added per waiting request (self size; ${before} → ${after}):\n`);
  console.log("| node | per request | bytes |\n|---|--:|--:|");
  for (const row of added.slice(0, TOP)) console.log(`| ${row.key.replace(/\|/g, "\\|")} | ${row.count.toFixed(2)} | ${row.bytes.toFixed(0)} |`);
}

async function main(): Promise<void> {
  if (WARM + COUNT >= FLUSH_AT_ROWS) throw new Error(`WARM + COUNT must stay under ${FLUSH_AT_ROWS}, where the write buffer flushes at once`);
  const { mocks } = await startBenchUpstreams(MOCK_KEY);
  const database = await startDatabase();
  const probeDir = mkdtempSync(join(tmpdir(), "switchyard-retained-"));
  const snapshotRoot = process.env.SNAPSHOT_DIR;
  const rows: string[] = [];
  for (const variant of parseVariants(process.env.VARIANTS ?? "default:{}")) {
    const label = variant.mode.replace(/[^a-z0-9]+/gi, "_");
    const file = join(probeDir, `${label}.txt`);
    writeFileSync(file, "");
    const snapshots = snapshotRoot === undefined ? undefined : join(snapshotRoot, label);
    if (snapshots !== undefined) mkdirSync(snapshots, { recursive: true });
    const server = await startSwitchyard({
      ...variant,
      env: { ...variant.env, METERING_FLUSH_INTERVAL_MS: "600000", RETAINED_PROBE_FILE: file, ...(snapshots === undefined ? {} : { RETAINED_SNAPSHOT_DIR: snapshots }) },
      bunFlags: ["--preload", join(HERE, "retained-probe.ts")],
      database,
      mocks,
      mockKey: MOCK_KEY,
    });
    try {
      const target = chatTarget(variant.mode, server.url, server.apiKey, "mock-openai/gpt-4o-mini", STREAM);
      await sendRequests(target, WARM, 1);
      const waitingBefore = await bufferedRequestRows(server.url);
      const before = await read(server, file);
      await sendRequests(target, COUNT, LANES);
      await Bun.sleep(300);
      const after = await read(server, file);
      const waiting = (await bufferedRequestRows(server.url)) - waitingBefore;
      if (waiting !== COUNT) throw new Error(`${variant.mode}: ${waiting} of the ${COUNT} requests' records still wait to be written; the count needs all of them`);
      const perType = Object.keys({ ...before.cells, ...after.cells }).map((type) => [type, ((after.cells[type] ?? 0) - (before.cells[type] ?? 0)) / COUNT] as const);
      const total = perType.reduce((sum, [, perRequest]) => sum + perRequest, 0);
      const cells = perType.filter(([, perRequest]) => Math.abs(perRequest) >= 0.5).sort((x, y) => y[1] - x[1]);
      rows.push(
        `| ${variant.mode} | ${((after.heapSize - before.heapSize) / COUNT).toFixed(0)} | ${((after.extraMemory - before.extraMemory) / COUNT).toFixed(0)} | ${total.toFixed(1)} | ${cells.map(([type, perRequest]) => `${type} ${perRequest.toFixed(1)}`).join(", ")} |`,
      );
      if (snapshots !== undefined) printSnapshotDiff(join(snapshots, "0.heapsnapshot"), join(snapshots, "1.heapsnapshot"));
    } finally {
      await server.stop();
    }
  }
  console.log(`\nKept alive per ${STREAM ? "streamed " : ""}request while its rows wait (${COUNT} requests after ${WARM}, main thread, after full collections)\n`);
  console.log("| server | heap bytes | bytes outside the blocks | cells | cells by type |\n|---|--:|--:|--:|---|");
  for (const row of rows) console.log(row);
}

try {
  await main();
} finally {
  await cleanupAll();
}
