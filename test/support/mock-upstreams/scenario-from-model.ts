/**
 * Scenario selection by upstream model id, so one mock can serve many tests at once.
 *
 * Grammar (the suffix after the LAST "@" of the model id; the Gemini model is the path
 * segment before ":generateContent"):
 *
 *   model-id  = base "@" kind [ number ]
 *   kind      = "text" | "tool_call" | "parallel_tool_calls" | "reasoning"
 *             | "error" | "stream_cut" | "hang" | "slow"
 *             | "stream_error" | "flood"                          ("-" may replace "_")
 *   number    = 1*DIGIT, meaning depends on kind:
 *                 error<N>       HTTP status N          ("m@error429", "m@error529")
 *                 stream_cut<N>  cut after N frames     ("m@stream_cut3")
 *                 slow<N>        N ms before first byte ("m@slow250")
 *                 stream_error<N> error frame after N frames ("m@stream_error3")
 *                 flood<N>       N text delta frames    ("m@flood50000")
 *               and is not allowed after the other kinds.
 *   "paced" N     N words of text, a frame each, 1 ms apart: a provider streaming tokens
 *                 (kind "text"; "m@paced100", the benchmark's long stream)
 *
 * Examples: "gpt-4o-mini@tool_call", "claude-sonnet-4-5@reasoning", "m@error500", "m@hang".
 * A suffix that does not parse is not a selector: the whole string stays the model id.
 * A selector wins over queued and default scenarios and does not consume the queue; the
 * fields it does not set (text, usage, delays, …) come from the default scenario.
 * The mock echoes the base (without the suffix) as the model name.
 */
import type { MockScenario, MockScenarioKind } from "./mock-types";

const KINDS: readonly MockScenarioKind[] = [
  "text",
  "tool_call",
  "parallel_tool_calls",
  "reasoning",
  "error",
  "stream_cut",
  "hang",
  "slow",
  "stream_error",
  "flood",
];

const KINDS_WITH_NUMBER: ReadonlySet<MockScenarioKind> = new Set(["error", "stream_cut", "slow", "stream_error", "flood"]);

export interface ModelSelector {
  /** The model id without the "@…" suffix. */
  baseModel: string;
  /** The scenario fields the suffix selects, or undefined when there is no selector. */
  selected: Partial<MockScenario> & { kind: MockScenarioKind } | undefined;
}

export function scenarioFromModel(modelId: string): ModelSelector {
  const at = modelId.lastIndexOf("@");
  if (at <= 0) return { baseModel: modelId, selected: undefined };
  const match = /^([a-z_]+)(\d+)?$/.exec(modelId.slice(at + 1).replaceAll("-", "_"));
  if (match?.[1] === "paced" && match[2] !== undefined) {
    return { baseModel: modelId.slice(0, at), selected: { kind: "text", text: pacedText(Number(match[2])), chunkDelayMs: 1 } };
  }
  const kind = KINDS.find((candidate) => candidate === match?.[1]);
  if (match === null || kind === undefined) return { baseModel: modelId, selected: undefined };
  const digits = match[2];
  if (digits !== undefined && !KINDS_WITH_NUMBER.has(kind)) {
    return { baseModel: modelId, selected: undefined };
  }
  const selected: Partial<MockScenario> & { kind: MockScenarioKind } = { kind };
  if (digits !== undefined) {
    const value = Number(digits);
    if (kind === "error") selected.status = value;
    if (kind === "stream_cut") selected.cutAfterChunks = value;
    if (kind === "slow") selected.delayMs = value;
    if (kind === "stream_error") selected.errorAfterChunks = value;
    if (kind === "flood") selected.floodFrames = value;
  }
  return { baseModel: modelId.slice(0, at), selected };
}

/** `words` words ("token0 token1 …"): the mock streams text a word a frame. */
function pacedText(words: number): string {
  return Array.from({ length: words }, (_, i) => `token${i}`).join(" ");
}
