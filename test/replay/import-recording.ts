/**
 * Adds one recording to recordings/<vendor>/ from a local copy of a public fixture:
 *
 *   bun test/replay/import-recording.ts --file <copy> --format chunks|json|cassette [--interaction N] \
 *     --vendor <vendor> --protocol <upstream protocol> --id <id> \
 *     --repository <owner/name> --path <path in it> --commit <sha> --license <SPDX id> [--tag structured-output]
 *
 * Formats: `json`, a whole body (kept byte for byte); `chunks`, the Vercel AI SDK's
 * `*.chunks.txt` (one SSE `data:` payload a line), framed back as the vendor sends it;
 * `cassette`, a VCR YAML cassette (pydantic-ai), whose interaction's body is the wire bytes.
 * The exercise tags are read from the bytes (expected/exercise-tags.ts); `--tag` adds those
 * they cannot show.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { UpstreamProtocol } from "../support/mock-upstreams";
import { expectedAnswer } from "./expected/expected-answer";
import { exerciseTags } from "./expected/exercise-tags";
import { EXERCISE_TAGS, RECORDINGS_DIR, type ExerciseTag, type Recording, type RecordingMeta, type RecordingMode } from "./recording";

const PROTOCOLS: readonly UpstreamProtocol[] = ["openai-chat", "openai-responses", "anthropic-messages", "google-generate-content"];

/**
 * One `data:` payload a line, framed as each wire does: Anthropic and Responses name every
 * event after its payload's `type`; chat ends with `data: [DONE]`; Gemini ends lines with CRLF.
 */
function frameChunks(lines: string[], protocol: UpstreamProtocol): { bytes: string; framing: string } {
  switch (protocol) {
    case "anthropic-messages":
    case "openai-responses":
      return {
        bytes: lines.map((line) => `event: ${JSON.parse(line).type}\ndata: ${line}\n\n`).join(""),
        framing: "one data: line per fixture line, each preceded by the event: line naming its payload's type",
      };
    case "openai-chat":
      return { bytes: lines.map((line) => `data: ${line}\n\n`).join("") + "data: [DONE]\n\n", framing: "one data: line per fixture line, then data: [DONE]" };
    case "google-generate-content":
      return { bytes: lines.map((line) => `data: ${line}\r\n\r\n`).join(""), framing: "one data: line per fixture line, CRLF line ends" };
  }
}

function fromCassette(text: string, interaction: number): { bytes: string; mode: RecordingMode; framing?: string } {
  const cassette = Bun.YAML.parse(text) as { interactions: any[] };
  const entry = cassette.interactions[interaction];
  if (entry === undefined) throw new Error(`no interaction ${interaction}`);
  const response = entry.response;
  const contentType = String(response.headers?.["content-type"]?.[0] ?? "");
  const stream = contentType.includes("event-stream");
  if (typeof response.body?.string === "string") return { bytes: response.body.string, mode: stream ? "stream" : "sync" };
  return {
    bytes: `${JSON.stringify(response.parsed_body, null, 2)}\n`,
    mode: "sync",
    framing: "the cassette keeps this body parsed: written back as JSON with two-space indents, keys in the cassette's order",
  };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      file: { type: "string" },
      format: { type: "string" },
      interaction: { type: "string" },
      vendor: { type: "string" },
      protocol: { type: "string" },
      id: { type: "string" },
      repository: { type: "string" },
      path: { type: "string" },
      commit: { type: "string" },
      license: { type: "string" },
      tag: { type: "string", multiple: true },
    },
  });
  const need = (name: keyof typeof values): string => {
    const value = values[name];
    if (typeof value !== "string" || value === "") throw new Error(`--${name} is required`);
    return value;
  };
  const protocol = need("protocol") as UpstreamProtocol;
  if (!PROTOCOLS.includes(protocol)) throw new Error(`--protocol must be one of ${PROTOCOLS.join(", ")}`);
  const id = need("id");
  if (!/^[a-z0-9][a-z0-9.-]*$/.test(id)) throw new Error("--id: lower-case letters, digits, dots and dashes (it is a model id in a URL path)");
  const text = readFileSync(need("file"), "utf8");
  const format = need("format");
  const interaction = values.interaction === undefined ? undefined : Number(values.interaction);
  let bytes: string;
  let mode: RecordingMode;
  let framing: string | undefined;
  if (format === "chunks") {
    ({ bytes, framing } = frameChunks(text.split("\n").filter((line) => line.trim() !== ""), protocol));
    mode = "stream";
  } else if (format === "json") {
    bytes = text;
    mode = "sync";
  } else if (format === "cassette") {
    ({ bytes, mode, framing } = fromCassette(text, interaction ?? 0));
  } else throw new Error("--format must be chunks, json or cassette");

  const vendor = need("vendor");
  const body = `${id}.${mode === "stream" ? "sse" : "json"}`;
  const extra = (values.tag ?? []) as ExerciseTag[];
  for (const tag of extra) if (!EXERCISE_TAGS.includes(tag)) throw new Error(`unknown tag ${tag}`);
  const draft: Recording = { vendor, protocol, mode, body, model: "", source: { repository: "", path: "", commit: "", license: "" }, exercises: [], id, bytes };
  const answer = expectedAnswer(draft);
  const model = /"(?:model|modelVersion)"\s*:\s*"([^"]+)"/.exec(bytes)?.[1] ?? "";
  const meta: RecordingMeta = {
    vendor,
    protocol,
    mode,
    body,
    model,
    source: {
      repository: need("repository"),
      path: need("path"),
      commit: need("commit"),
      license: need("license"),
      ...(interaction === undefined ? {} : { interaction }),
    },
    exercises: [...new Set([...exerciseTags(draft, answer), ...extra])].sort((a, b) => EXERCISE_TAGS.indexOf(a) - EXERCISE_TAGS.indexOf(b)),
    ...(framing === undefined ? {} : { framing }),
  };
  const dir = join(RECORDINGS_DIR, vendor);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, body), bytes);
  writeFileSync(join(dir, `${id}.meta.json`), `${JSON.stringify(meta, null, 2)}\n`);
  console.log(`${vendor}/${id}: ${mode}, ${meta.exercises.join(" ")}`);
}

main();
