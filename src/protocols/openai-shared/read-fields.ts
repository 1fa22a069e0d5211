import { IrDecodeError, type IrReasoningEffort } from "../../ir";
import { isRecord, type JsonObject } from "../shared/json-fields";

/**
 * Typed readers for client bodies. Each throws IrDecodeError with the field's path, so
 * a malformed body becomes a 400 that says exactly what is wrong. `null` is read as
 * "absent" because the OpenAI SDKs send explicit nulls for unset optional params.
 */

/** The object check is the one every codec uses (shared/json-fields.ts). */
export { isRecord, type JsonObject };

export function requireRecord(value: unknown, path: string): JsonObject {
  if (!isRecord(value)) throw new IrDecodeError(`${path} must be an object`);
  return value;
}

export function readModel(body: JsonObject): string {
  const model = body.model;
  if (typeof model !== "string" || model.trim() === "") {
    throw new IrDecodeError("model is required and must be a non-empty string");
  }
  return model;
}

export function requiredString(value: unknown, path: string): string {
  if (typeof value !== "string") throw new IrDecodeError(`${path} must be a string`);
  return value;
}

export function optionalString(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new IrDecodeError(`${path} must be a string`);
  return value;
}

export function optionalNumber(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) throw new IrDecodeError(`${path} must be a number`);
  return value;
}

/** An integer a double holds exactly (|n| ≤ 2^53 − 1): 1e20 is out of range, not an integer. */
export function optionalInteger(value: unknown, path: string): number | undefined {
  const number = optionalNumber(value, path);
  if (number === undefined) return undefined;
  if (!Number.isInteger(number)) throw new IrDecodeError(`${path} must be an integer`);
  if (!Number.isSafeInteger(number)) throw new IrDecodeError(`${path} is out of range`);
  return number;
}

export function optionalBoolean(value: unknown, path: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw new IrDecodeError(`${path} must be a boolean`);
  return value;
}

/**
 * The largest token limit a request may name: 2^31 − 1, the vendors' own int32 fields.
 * It keeps the reservation (limit × price) far inside what a bigint column holds.
 */
export const MAX_TOKEN_LIMIT = 2_147_483_647;

/** A token limit: an integer in [1, MAX_TOKEN_LIMIT]. */
export function optionalTokenLimit(value: unknown, path: string): number | undefined {
  const limit = optionalInteger(value, path);
  if (limit !== undefined && (limit < 1 || limit > MAX_TOKEN_LIMIT)) throw new IrDecodeError(`${path} must be an integer between 1 and ${MAX_TOKEN_LIMIT}`);
  return limit;
}

const REASONING_EFFORTS: readonly IrReasoningEffort[] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

export function optionalReasoningEffort(value: unknown, path: string): IrReasoningEffort | undefined {
  const effort = optionalString(value, path);
  if (effort === undefined) return undefined;
  const known = REASONING_EFFORTS.find((candidate) => candidate === effort);
  if (known === undefined) throw new IrDecodeError(`${path} must be one of ${REASONING_EFFORTS.join(", ")}`);
  return known;
}

/** `stop`: a string or an array of strings, always an array in the IR. */
export function optionalStopSequences(value: unknown, path: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return [value];
  if (Array.isArray(value) && value.every((entry) => typeof entry === "string")) return value;
  throw new IrDecodeError(`${path} must be a string or an array of strings`);
}

/** Tool-call arguments are JSON text in the IR; some compatible providers send an object. */
export function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return JSON.stringify(value);
}
