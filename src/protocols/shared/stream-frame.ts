import { irError, type IrStreamPart } from "../../ir";
import { parseJsonWithinDepth } from "./json-depth";

/** One stream frame's data as JSON, or the parts that end the stream because it is not. */
export type StreamFrame = { ok: true; value: unknown } | { ok: false; parts: IrStreamPart[] };

/**
 * Parses a frame of an upstream's JSON stream. Data that is not JSON, or nests past
 * MAX_JSON_DEPTH, ends the stream with an `upstream_invalid_response` error saying
 * `malformed`.
 */
export function parseStreamFrame(data: string, malformed: string): StreamFrame {
  try {
    return { ok: true, value: parseJsonWithinDepth(data) };
  } catch {
    return { ok: false, parts: invalidStream(malformed) };
  }
}

/** The error part that ends a stream the upstream garbled or broke off. */
export function invalidStream(message: string): IrStreamPart[] {
  return [{ type: "error", error: irError("upstream_invalid_response", message) }];
}
