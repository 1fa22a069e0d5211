/**
 * Real provider traffic through every client protocol: each recording (README) is served
 * by the replay upstream and asked for by the four official SDKs in the recording's mode
 * (a body by four sync calls, a stream by four stream calls), through one gateway. Every
 * cell is checked against what the recording itself says (check-cell.ts); the aspects that
 * are known to fail are `test.failing` (known-gaps.ts).
 *
 * The cells run first, a few at a time, then each test asserts on its cell's outcome.
 * `REPLAY_REPORT=<file>` writes every failing aspect there as JSON.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import type postgres from "postgres";
import builtinCatalog from "../../src/providers/builtin-catalog.json";
import { CLIENTS, type ClientName } from "../policy-enforcement/enforcement-support";
import { closeClients, database, normaliseRow } from "../metering/metering-support";
import { startTestServer, type TestServer } from "../support/test-server";
import type { UpstreamProtocol } from "../support/mock-upstreams";
import { checkCell, type Aspect, type CellOutcome } from "./check-cell";
import { callClient } from "./clients/call-client";
import { expectedAnswer } from "./expected/expected-answer";
import { exerciseTags } from "./expected/exercise-tags";
import { KNOWN_GAPS, type KnownGap } from "./known-gaps";
import { EXERCISE_TAGS, loadRecordings, type Recording } from "./recording";
import { modelIdOf, replayCatalog, writeCatalogFile } from "./replay-catalog";
import { startReplayUpstream, type ReplayUpstream } from "./replay-upstream";

const UPSTREAM_KEY = "replay-platform-key";
/** Cells in flight at once: enough to overlap the round trips, few enough for a 2-core machine. */
const CONCURRENCY = 6;

const recordings = loadRecordings();
const expectations = new Map(recordings.map((recording) => [recording.id, expectedAnswer(recording)]));
const cellKey = (recordingId: string, client: ClientName) => `${recordingId} → ${client}`;

/** Known gaps by cell, then aspect. */
const gaps = new Map<string, Map<Aspect, KnownGap>>();
for (const gap of KNOWN_GAPS) {
  for (const [recordingId, client] of gap.cells) {
    const key = cellKey(recordingId, client);
    const byAspect = gaps.get(key) ?? new Map<Aspect, KnownGap>();
    if (byAspect.has(gap.aspect)) throw new Error(`known-gaps.ts lists ${key} ${gap.aspect} twice`);
    byAspect.set(gap.aspect, gap);
    gaps.set(key, byAspect);
  }
}

let upstream: ReplayUpstream;
let server: TestServer;
let sql: postgres.Sql;
const results = new Map<string, Map<Aspect, string | undefined>>();

/** Enough prompt bytes and output tokens that the reservation covers the recorded usage (no charge is capped). */
function requestSize(recording: Recording): { prompt: string; maxTokens: number } {
  const usage = expectations.get(recording.id)!.usage;
  const prompt = `Replay ${recording.id}. ${"x".repeat(usage?.prompt ?? 0)}`;
  return { prompt, maxTokens: Math.max(256, (usage?.completion ?? 0) + 64) };
}

async function runCell(recording: Recording, client: ClientName, apiKey: string): Promise<CellOutcome & { requestId: string }> {
  const requestId = `replay-${crypto.randomUUID()}`;
  const view = await callClient(client, {
    baseUrl: server.url,
    apiKey,
    model: modelIdOf(recording),
    stream: recording.mode === "stream",
    requestId,
    ...requestSize(recording),
  });
  return { recording, client, expected: expectations.get(recording.id)!, view, records: [], requestId };
}

async function inPool<T>(tasks: Array<() => Promise<T>>, limit: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      out[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return out;
}

/**
 * The request records of these request ids, once every one has been written: a record is
 * queued when its request settles, so a flush that ran just before may have missed the last.
 */
async function recordsByRequest(requestIds: string[]): Promise<Map<string, any[]>> {
  const byRequest = new Map<string, any[]>();
  for (let attempt = 0; attempt < 20 && byRequest.size < requestIds.length; attempt++) {
    if (attempt > 0) await Bun.sleep(50);
    await server.server.services.writeBuffer.flush();
    byRequest.clear();
    for (const row of (await sql`select * from requests where request_id = any(${requestIds})`).map(normaliseRow)) {
      byRequest.set(row.request_id, [...(byRequest.get(row.request_id) ?? []), row]);
    }
  }
  return byRequest;
}

beforeAll(async () => {
  upstream = startReplayUpstream(recordings, UPSTREAM_KEY);
  const { catalog, env } = replayCatalog(recordings, upstream.origin, UPSTREAM_KEY);
  Object.assign(process.env, env);
  server = await startTestServer({ providersFile: writeCatalogFile(catalog) });
  const account = await server.createAccount(undefined, 1_000_000_000);
  sql = database(server.databaseUrl);

  const outcomes = await inPool(
    recordings.flatMap((recording) => CLIENTS.map((client) => () => runCell(recording, client, account.apiKey))),
    CONCURRENCY,
  );
  const byRequest = await recordsByRequest(outcomes.map((outcome) => outcome.requestId));
  const report: Array<{ cell: string; aspect: Aspect; failure: string; known: boolean }> = [];
  for (const outcome of outcomes) {
    outcome.records = byRequest.get(outcome.requestId) ?? [];
    const key = cellKey(outcome.recording.id, outcome.client);
    const checks = checkCell(outcome);
    results.set(key, checks);
    for (const [aspect, failure] of checks) if (failure !== undefined) report.push({ cell: key, aspect, failure, known: gaps.get(key)?.has(aspect) ?? false });
  }
  if (process.env.REPLAY_REPORT) writeFileSync(process.env.REPLAY_REPORT, JSON.stringify(report, null, 1));
}, 180_000);

afterAll(async () => {
  await closeClients();
  await server?.close();
  await upstream?.close();
});

describe("the corpus", () => {
  test("holds at least 100 recordings, of every upstream protocol and every built-in vendor that has one", () => {
    expect(recordings.length).toBeGreaterThanOrEqual(100);
    const protocols = new Set(recordings.map((recording) => recording.protocol));
    expect([...protocols].sort()).toEqual(["anthropic-messages", "google-generate-content", "openai-chat", "openai-responses"] satisfies UpstreamProtocol[]);
    const vendors = new Set(recordings.map((recording) => recording.vendor));
    for (const provider of builtinCatalog.providers) expect(vendors.has(provider.id), provider.id).toBe(true);
  });

  test("covers every exercise tag", () => {
    const tags = new Set(recordings.flatMap((recording) => recording.exercises));
    expect(EXERCISE_TAGS.filter((tag) => !tags.has(tag))).toEqual([]);
  });

  test("every recording names its source, licence and framing, and declares what its bytes show", () => {
    for (const recording of recordings) {
      expect(recording.source.repository, recording.id).toMatch(/^[\w.-]+\/[\w.-]+$/);
      expect(recording.source.commit, recording.id).toMatch(/^[0-9a-f]{40}$/);
      expect(["Apache-2.0", "MIT"], recording.id).toContain(recording.source.license);
      const declared: string[] = recording.exercises.filter((tag) => tag !== "structured-output");
      expect(declared, recording.id).toEqual(exerciseTags(recording, expectations.get(recording.id)!));
    }
  });

  test("every known gap names a recording, a client and an aspect of a cell that applies", () => {
    const ids = new Set(recordings.map((recording) => recording.id));
    for (const gap of KNOWN_GAPS) for (const [recordingId] of gap.cells) expect(ids.has(recordingId), recordingId).toBe(true);
    for (const [key, byAspect] of gaps) for (const aspect of byAspect.keys()) expect(results.get(key)?.has(aspect), `${key} ${aspect}`).toBe(true);
  });

  test("every cell reached the replay upstream once, on its own protocol's path", () => {
    expect(upstream.calls.length).toBe(recordings.length * CLIENTS.length);
  });
});

for (const recording of recordings) {
  describe(`${recording.vendor} ${recording.protocol} ${recording.mode}: ${recording.id}`, () => {
    for (const client of CLIENTS) {
      const key = cellKey(recording.id, client);
      test(`a ${client} client gets what the recording says`, () => {
        const checks = results.get(key);
        expect(checks, "the cell ran").toBeDefined();
        const failures = [...checks!].filter(([aspect, failure]) => failure !== undefined && !gaps.get(key)?.has(aspect));
        expect(failures.map(([aspect, failure]) => `${aspect}: ${failure}`)).toEqual([]);
      });
      for (const [aspect, gap] of gaps.get(key) ?? []) {
        test.failing(`known gap (issue 27 item ${gap.item}) for a ${client} client, ${aspect}: ${gap.cause}`, () => {
          expect(results.get(key)?.get(aspect)).toBeUndefined();
        });
      }
    }
  });
}
