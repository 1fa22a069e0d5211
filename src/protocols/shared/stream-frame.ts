import { irError, type IrStreamPart } from "../../ir";
import { parseJsonWithinDepth } from "./json-depth";

/** One stream frame's data as JSON, or the parts that end the stream because it is not. */
export type StreamFrame = { ok: true; value: unknown } | { ok: false; parts: IrStreamPart[] };

/**
 * How far an upstream's JSON stream has come, for its decoder: `finished` once the finish
 * part is out, `failed` once an error part is. A decoder sends nothing after a failure,
 * and a stream that stops before either is an error.
 */
export class StreamEnding {
  finished = false;
  failed = false;

  /** Finished or failed: nothing the upstream sends now changes the answer. */
  get over(): boolean {
    return this.finished || this.failed;
  }

  /**
   * A frame's data as JSON. Data that is not JSON, or nests past MAX_JSON_DEPTH, fails the
   * stream with an `upstream_invalid_response` error saying `malformed`.
   */
  parse(data: string, malformed: string): StreamFrame {
    try {
      return { ok: true, value: parseJsonWithinDepth(data) };
    } catch {
      this.failed = true;
      return { ok: false, parts: invalidStream(malformed) };
    }
  }

  /** The upstream's stream has stopped: nothing more when it finished or failed, else it fails, broken off. */
  end(): IrStreamPart[] {
    if (this.over) return [];
    this.failed = true;
    return invalidStream("stream ended early");
  }
}

/** The error part that ends a stream the upstream garbled or broke off. */
function invalidStream(message: string): IrStreamPart[] {
  return [{ type: "error", error: irError("upstream_invalid_response", message) }];
}
