/**
 * A recording: one answer a real provider sent, stored as its bytes (a JSON body, or an SSE
 * stream with its own framing) beside a `<id>.meta.json` that says where it comes from and
 * what it exercises (README "Adding a recording").
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { UpstreamProtocol } from "../support/mock-upstreams";

export type RecordingMode = "sync" | "stream";

/** Where the bytes were copied from: a public repository's fixture, at a commit. */
export interface RecordingSource {
  repository: string;
  path: string;
  commit: string;
  license: string;
  /** A cassette holds several calls: the one taken, from 0. */
  interaction?: number;
}

/**
 * What a recording exercises. The tags a reader can see in the bytes are checked against
 * them (replay.test.ts); `structured-output` is known from the request that was recorded.
 */
export const EXERCISE_TAGS = [
  "text",
  "tools:none",
  "tools:one",
  "tools:parallel",
  "tools:no-arguments",
  "reasoning:plain",
  "reasoning:signed",
  "reasoning:redacted",
  "reasoning:summarized",
  "server-tools",
  "citations",
  "cache-usage",
  "structured-output",
  "refusal",
  "stop:length",
  "error:in-stream",
  "hosted-call",
  "content-array",
] as const;
export type ExerciseTag = (typeof EXERCISE_TAGS)[number];

export interface RecordingMeta {
  /** The vendor whose API answered: a provider id of src/providers/builtin-catalog.json, or `azure`, `github-copilot`. */
  vendor: string;
  protocol: UpstreamProtocol;
  mode: RecordingMode;
  /** The bytes' file, next to the meta file. */
  body: string;
  /** The model the recording was made with (informational). */
  model: string;
  source: RecordingSource;
  exercises: ExerciseTag[];
  /** What was done to the fixture's bytes to restore the wire framing, if anything. */
  framing?: string;
}

export interface Recording extends RecordingMeta {
  /** `<name>`, unique across vendors: the upstream model id that selects it. */
  id: string;
  bytes: string;
}

export const RECORDINGS_DIR = join(import.meta.dir, "recordings");

/** Every recording under recordings/<vendor>/, sorted by id. */
export function loadRecordings(dir: string = RECORDINGS_DIR): Recording[] {
  const recordings: Recording[] = [];
  const seen = new Set<string>();
  for (const vendor of readdirSync(dir).sort()) {
    for (const file of readdirSync(join(dir, vendor)).sort()) {
      if (!file.endsWith(".meta.json")) continue;
      const id = file.slice(0, -".meta.json".length);
      if (seen.has(id)) throw new Error(`recording id ${id} is used twice`);
      seen.add(id);
      const meta = JSON.parse(readFileSync(join(dir, vendor, file), "utf8")) as RecordingMeta;
      if (meta.vendor !== vendor) throw new Error(`${vendor}/${file}: vendor ${meta.vendor} is not its folder`);
      recordings.push({ ...meta, id, bytes: readFileSync(join(dir, vendor, meta.body), "utf8") });
    }
  }
  return recordings;
}
