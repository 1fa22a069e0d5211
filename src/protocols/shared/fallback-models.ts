import { IrDecodeError } from "../../ir";

/** Switchyard extension: `models`, a fallback list of at most 8 model ids. */
export const MAX_FALLBACK_MODELS = 8;

/** The body field `models`, read the same way on every protocol. */
export function readFallbackModels(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new IrDecodeError("models must be an array of strings");
  if (value.length > MAX_FALLBACK_MODELS) throw new IrDecodeError(`models must list at most ${MAX_FALLBACK_MODELS} model ids`);
  return value.map((entry, index) => {
    if (typeof entry !== "string") throw new IrDecodeError("models must be an array of strings");
    if (entry.trim() === "") throw new IrDecodeError(`models[${index}] must be a non-empty string`);
    return entry;
  });
}
