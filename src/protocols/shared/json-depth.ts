import { IrDecodeError } from "../../ir";

/**
 * How deeply objects and arrays may nest anywhere in a JSON value the gateway decodes
 * (a client body, an upstream body or stream event, tool-call argument text). Real
 * requests stay far below it — a tool's JSON Schema rarely passes 15 levels, plus a
 * handful for the envelope — while every recursive step after decoding (schema
 * rewriting, JSON.stringify of the re-encoded body, structured cloning) stays far from
 * the engine's stack limit, on the request thread and in translation workers alike.
 * JSON.parse itself copes with any depth; what comes after it does not.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether `value` nests objects/arrays deeper than `maxDepth` (the top-level container
 * is depth 1). Walks with an explicit stack, so it cannot overflow whatever it is
 * given, and stops at the first container past the limit.
 */
export function exceedsJsonDepth(value: unknown, maxDepth = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  const containers: object[] = [value];
  const depths: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    if (Array.isArray(container)) {
      for (const child of container) {
        if (typeof child === "object" && child !== null) {
          containers.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      // A parsed JSON object has only own enumerable keys: for…in without Object.values' array.
      for (const key in container) {
        const child = (container as Record<string, unknown>)[key];
        if (typeof child === "object" && child !== null) {
          containers.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/**
 * Whether the JSON `text` may nest deeper than `maxDepth`: false when it holds no more
 * than `maxDepth` of "{" and "[" in all (each container opens with one; those inside
 * strings only overcount), so the walk over the parsed value can be skipped. A stream
 * frame has a handful: this costs a few native searches where the walk allocated and
 * visited every container (test/bench/HISTORY.md).
 */
export function textMayExceedDepth(text: string, maxDepth = MAX_JSON_DEPTH): boolean {
  let count = 0;
  for (let at = text.indexOf("{"); at !== -1; at = text.indexOf("{", at + 1)) if (++count > maxDepth) return true;
  for (let at = text.indexOf("["); at !== -1; at = text.indexOf("[", at + 1)) if (++count > maxDepth) return true;
  return false;
}

/** Throws IrDecodeError (a 400 for a client body) when `value` nests deeper than MAX_JSON_DEPTH. */
export function assertJsonDepth(value: unknown, what: string): void {
  if (exceedsJsonDepth(value)) throw new IrDecodeError(`${what} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`);
}

/** JSON.parse that also throws (a SyntaxError, like bad text) when the value nests deeper than MAX_JSON_DEPTH. */
export function parseJsonWithinDepth(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (textMayExceedDepth(text) && exceedsJsonDepth(value)) throw new SyntaxError(`JSON nests deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}
