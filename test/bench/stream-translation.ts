/**
 * `npx bun test/bench/stream-translation.ts`: what the gateway's own code spends on one
 * stream's bytes, in this process, on the recordings of real provider traffic
 * (test/replay/recordings, every stream): the SSE parse, the decoder that finds what the
 * record needs (first token, usage, finish) and, for a same-protocol stream, the
 * passthrough framer that relays the bytes; for a cross-protocol one, the encoder too.
 * Each recording arrives one SSE frame per chunk, as upstreams send them.
 *
 * Prints µs per stream and per frame by upstream protocol, the best of three timed rounds
 * after an untimed one. A measurement, not a test. `BEFORE_ROOT=<checkout>` (e.g. a `git
 * worktree` of an earlier commit) loads that checkout's code into the same process and
 * times both in alternating rounds, so the machine's drift falls on both alike.
 * `ASKED_USAGE=0` relays to clients that did not ask for usage (the default: they did).
 * `PART=framer` or `PART=accounting` times one half of a same-protocol relay: the framer
 * that forwards the bytes, or the decoder that accounts for them.
 */
import { resolve } from "node:path";
import type { ProtocolId } from "../../src/ir";
import { loadRecordings } from "../replay/recording";

interface Code {
  name: string;
  StreamTranslation: typeof import("../../src/translation/stream-translation").StreamTranslation;
  PassthroughFramer: typeof import("../../src/pipeline/passthrough-framer").PassthroughFramer;
}

async function codeAt(name: string, root: string): Promise<Code> {
  const { StreamTranslation } = await import(resolve(root, "src/translation/stream-translation.ts"));
  const { PassthroughFramer } = await import(resolve(root, "src/pipeline/passthrough-framer.ts"));
  return { name, StreamTranslation, PassthroughFramer };
}

const CONTEXT = { requestId: "req_bench", model: "bench/model", created: 1_750_000_000 };
/** `ASKED_USAGE=0`: clients that did not ask for usage (a chat stream then drops the usage-only chunk it was sent for the bill). */
const ASKED_USAGE = process.env.ASKED_USAGE !== "0";
const ROUND_MS = Number(process.env.ROUND_MS ?? 1_500);

/** A recording's frames, each ending with its blank line (LF or CRLF), as one chunk each. */
function framesOf(bytes: string): string[] {
  return bytes.split(/(?<=\r?\n\r?\n)/).filter((frame) => frame.length > 0);
}

/** `PART=framer` or `PART=accounting`: time only that half of a same-protocol relay (default: both). */
const PART = process.env.PART;

function relay(code: Code, upstream: ProtocolId, client: ProtocolId, frames: readonly string[]): void {
  const passthrough = upstream === client;
  const translation = passthrough && PART === "framer" ? undefined : new code.StreamTranslation({ sessionId: "s", upstream, client, context: CONTEXT, clientAskedUsage: ASKED_USAGE, passthrough });
  const framer = passthrough && PART !== "accounting" ? new code.PassthroughFramer(client, CONTEXT.model, ASKED_USAGE) : undefined;
  for (const frame of frames) {
    translation?.push(frame);
    framer?.take(frame);
  }
  translation?.end();
  framer?.flush();
}

/** µs per call of `run` over all `streams`, for each code: best of three alternating rounds of ROUND_MS. */
function measure(codes: readonly Code[], streams: readonly string[][], run: (code: Code, frames: readonly string[]) => void): number[] {
  const round = (code: Code) => {
    let calls = 0;
    const started = performance.now();
    while (performance.now() - started < ROUND_MS) {
      for (const frames of streams) run(code, frames);
      calls += streams.length;
    }
    return ((performance.now() - started) * 1_000) / calls;
  };
  const best = codes.map(() => Number.POSITIVE_INFINITY);
  for (const code of codes) round(code);
  for (let r = 0; r < 3; r++) codes.forEach((code, i) => (best[i] = Math.min(best[i]!, round(code))));
  return best;
}

const codes: Code[] = [];
if (process.env.BEFORE_ROOT) codes.push(await codeAt("before", process.env.BEFORE_ROOT));
codes.push(await codeAt(process.env.BEFORE_ROOT ? "after" : "this checkout", resolve(import.meta.dir, "../..")));
const cell = (values: number[], per = 1) => values.map((v) => (v / per).toFixed(per === 1 ? 1 : 2)).join(" → ");

const byProtocol = new Map<ProtocolId, string[][]>();
for (const recording of loadRecordings()) {
  if (recording.mode !== "stream") continue;
  const list = byProtocol.get(recording.protocol) ?? [];
  list.push(framesOf(recording.bytes));
  byProtocol.set(recording.protocol, list);
}

console.log(`code: ${codes.map((code) => code.name).join(" → ")}`);
console.log("| upstream protocol | streams | frames per stream | same protocol µs/stream | µs/frame | to openai-chat µs/stream |");
console.log("|---|--:|--:|--:|--:|--:|");
for (const [protocol, streams] of [...byProtocol].sort(([a], [b]) => a.localeCompare(b))) {
  const frames = streams.reduce((sum, stream) => sum + stream.length, 0) / streams.length;
  const same = measure(codes, streams, (code, stream) => relay(code, protocol, protocol, stream));
  const cross = protocol === "openai-chat" ? undefined : measure(codes, streams, (code, stream) => relay(code, protocol, "openai-chat", stream));
  console.log(`| ${protocol} | ${streams.length} | ${frames.toFixed(1)} | ${cell(same)} | ${cell(same, frames)} | ${cross === undefined ? "—" : cell(cross)} |`);
}
