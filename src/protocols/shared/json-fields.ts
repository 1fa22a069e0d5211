import { IrDecodeError, type IrToolCallPart, type IrWarning } from "../../ir";
import { parseJsonWithinDepth } from "./json-depth";

/**
 * Typed readers for untrusted JSON. Each throws IrDecodeError naming the field, so a
 * client sees "temperature must be a number" instead of a generic 400. Shared by every
 * codec, since protocol folders do not import each other.
 */
export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Sets `key` as an own property, as JSON.parse would. Plain assignment of a client's
 * "__proto__" key replaces the prototype instead, and the field vanishes.
 */
export function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `target[key]` when `key` is its own property: "constructor" or "toString" find nothing. */
export function ownField(target: JsonObject, key: string): unknown {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

export function readNumber(body: JsonObject, key: string, path = key): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new IrDecodeError(`${path} must be a number`);
  return value;
}

/**
 * The largest token count a request may name (max tokens, thinking budgets, top-k):
 * 2^31 − 1, the vendors' own int32 fields. It keeps every product of a token count and
 * a price far inside what a bigint column and a double hold exactly.
 */
export const MAX_TOKEN_COUNT = 2_147_483_647;

/** An integer within [min, max] (default: any integer a double holds exactly); 1e20 is out of range, not an integer. */
export function readInteger(body: JsonObject, key: string, path = key, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const value = readNumber(body, key, path);
  if (value === undefined) return undefined;
  if (!Number.isInteger(value)) throw new IrDecodeError(`${path} must be an integer`);
  if (value < min || value > max) throw new IrDecodeError(`${path} must be an integer between ${min} and ${max}`);
  return value;
}

/** A token count: an integer in [min, MAX_TOKEN_COUNT]. */
export function readTokenCount(body: JsonObject, key: string, path = key, min = 1): number | undefined {
  return readInteger(body, key, path, min, MAX_TOKEN_COUNT);
}

export function readString(body: JsonObject, key: string, path = key): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new IrDecodeError(`${path} must be a string`);
  return value;
}

/** A string that must be present: absent or null is refused like a wrong type. */
export function requireString(body: JsonObject, key: string, path = key): string {
  const value = readString(body, key, path);
  if (value === undefined) throw new IrDecodeError(`${path} must be a string`);
  return value;
}

export function readBoolean(body: JsonObject, key: string, path = key): boolean | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new IrDecodeError(`${path} must be a boolean`);
  return value;
}

export function readStringArray(body: JsonObject, key: string, path = key): string[] | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === "string")) {
    throw new IrDecodeError(`${path} must be an array of strings`);
  }
  return value;
}

export function readObject(body: JsonObject, key: string, path = key): JsonObject | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new IrDecodeError(`${path} must be an object`);
  return value;
}

/**
 * Parses tool-call argument text into the object a wire format needs; invalid JSON, or
 * JSON nested past MAX_JSON_DEPTH (it would overflow the stack when re-serialized),
 * gives undefined.
 */
export function parseArgumentsObject(text: string): JsonObject | undefined {
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = parseJsonWithinDepth(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A tool call of an earlier turn, sent upstream again: its arguments as the object
 * Anthropic `input` and Gemini `args` need. Text that is not a JSON object goes as {},
 * with a warning.
 */
export function replayedArguments(part: IrToolCallPart, path: string, warnings: IrWarning[]): JsonObject {
  const input = parseArgumentsObject(part.arguments);
  if (input !== undefined) return input;
  warnings.push({ code: "invalid_tool_arguments", field: path, message: `tool call ${part.id} arguments are not a JSON object; sent as {}` });
  return {};
}
