import { IrDecodeError } from "../../ir";

/**
 * Typed readers for untrusted JSON. Each throws IrDecodeError naming the field, so a
 * client sees "temperature must be a number" instead of a generic 400.
 *
 * The Gemini codec keeps its own copy of these few lines on purpose: protocol folders
 * do not import each other (see the final report for moving them to a shared folder).
 */
export type JsonObject = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function readNumber(body: JsonObject, key: string, path = key): number | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new IrDecodeError(`${path} must be a number`);
  return value;
}

export function readInteger(body: JsonObject, key: string, path = key): number | undefined {
  const value = readNumber(body, key, path);
  if (value !== undefined && !Number.isInteger(value)) throw new IrDecodeError(`${path} must be an integer`);
  return value;
}

export function readString(body: JsonObject, key: string, path = key): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new IrDecodeError(`${path} must be a string`);
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

/** Parses tool-call argument text into the object a wire format needs; invalid JSON gives undefined. */
export function parseArgumentsObject(text: string): JsonObject | undefined {
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
