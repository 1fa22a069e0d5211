/**
 * Runs upstream SSE bytes through a StreamTranslation in random chunk splits, and reads
 * the client's SSE back with the client protocol's own parser and stream decoder.
 */
import type { IrError, IrFinish, IrUsage, ProtocolId } from "../../../src/ir";
import { SseParser, type SseEvent } from "../../../src/protocols/sse";
import { codecFor } from "../../../src/translation/codec-registry";
import { StreamTranslation } from "../../../src/translation/stream-translation";
import type { StreamOutput, TranslationSignals } from "../../../src/translation/translation-types";
import { mergeUsage } from "./merge-usage";
import { splitAtRandom } from "../../support/split-chunks";

export const STREAM_CONTEXT = { requestId: "req_01JSTREAMMATRIX", model: "switchyard/client-model", created: 1_750_000_000 };

export interface RunOptions {
  upstream: ProtocolId;
  client: ProtocolId;
  passthrough: boolean;
  clientAskedUsage: boolean;
}

export interface RunResult {
  out: string;
  /** Every push/end output, to check that a passthrough emits nothing at any point. */
  outputs: StreamOutput[];
  signals: TranslationSignals;
}

export function mergeSignals(all: TranslationSignals[]): TranslationSignals {
  const merged: TranslationSignals = { usageFrames: [], outputBytes: 0, toolCalls: 0 };
  for (const signals of all) {
    if (merged.firstToken === undefined && signals.firstToken !== undefined) merged.firstToken = signals.firstToken;
    merged.usageFrames.push(...signals.usageFrames);
    if (signals.finish !== undefined) merged.finish = signals.finish;
    if (signals.error !== undefined) merged.error = signals.error;
    merged.outputBytes += signals.outputBytes;
    merged.toolCalls += signals.toolCalls;
  }
  return merged;
}

let sessions = 0;

function open(options: RunOptions): StreamTranslation {
  return new StreamTranslation({ sessionId: `matrix-${sessions++}`, context: STREAM_CONTEXT, ...options });
}

/** Feeds `pieces` and closes the upstream normally. */
export function runPieces(options: RunOptions, pieces: string[]): RunResult {
  const translation = open(options);
  const outputs = pieces.map((piece) => translation.push(piece));
  outputs.push(translation.end());
  return { out: outputs.map((output) => output.out).join(""), outputs, signals: mergeSignals(outputs.map((output) => output.signals)) };
}

export function runStream(options: RunOptions, upstreamText: string, seed: number, maxPieces: number): RunResult {
  return runPieces(options, splitAtRandom(upstreamText, seed, maxPieces));
}

/** Feeds `pieces`, then the upstream fails (timeout, reset): StreamTranslation.fail. */
export function runThenFail(options: RunOptions, pieces: string[], error: IrError): RunResult {
  const translation = open(options);
  const outputs = pieces.map((piece) => translation.push(piece));
  outputs.push(translation.fail(error));
  return { out: outputs.map((output) => output.out).join(""), outputs, signals: mergeSignals(outputs.map((output) => output.signals)) };
}

export interface ClientCall {
  id: string;
  name: string;
  args: string;
}

export interface ClientStreamView {
  events: SseEvent[];
  text: string;
  reasoning: string;
  calls: ClientCall[];
  finish?: IrFinish;
  usage?: IrUsage;
  error?: IrError;
}

/** Parses the client's SSE with the client protocol's own SseParser + stream decoder. */
export function readClientStream(client: ProtocolId, out: string): ClientStreamView {
  const parser = new SseParser();
  const events = [...parser.push(out), ...parser.end()];
  const decoder = codecFor(client).createStreamDecoder();
  const parts = [...events.flatMap((event) => decoder.push(event)), ...decoder.end()];
  const view: ClientStreamView = { events, text: "", reasoning: "", calls: [] };
  const byIndex = new Map<number, ClientCall>();
  for (const part of parts) {
    switch (part.type) {
      case "text_delta":
        view.text += part.text;
        break;
      case "reasoning_delta":
        view.reasoning += part.text;
        break;
      case "tool_call_start": {
        const call = { id: part.id, name: part.name, args: "" };
        byIndex.set(part.index, call);
        view.calls.push(call);
        break;
      }
      case "tool_call_delta": {
        const call = byIndex.get(part.index);
        if (call !== undefined) call.args += part.argumentsDelta;
        break;
      }
      case "usage":
        view.usage = mergeUsage(view.usage, part.usage);
        break;
      case "finish":
        view.finish = part.finish;
        break;
      case "error":
        view.error = part.error;
        break;
      default:
        break;
    }
  }
  return view;
}

export type Json = Record<string, unknown>;

export function dataOf(event: SseEvent): Json {
  return JSON.parse(event.data) as Json;
}

export function record(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
