import type { IrRequest, IrWarning, ProtocolId } from "../../ir";
import { isRecord, type JsonObject } from "./read-fields";
import { ownField, setOwn } from "../shared/json-fields";

/**
 * Fields a decoder did not map ride in `IrRequest.extras` (style habit 1). A few keys are
 * partly mapped — the encoder also writes them — so they merge instead of overwriting:
 * objects merge with the encoder's values winning (e.g. `stream_options.include_usage`),
 * arrays append (hosted tools after function tools), anything else only fills a gap.
 */
export function applyExtras(body: JsonObject, request: IrRequest, target: ProtocolId, warnings: IrWarning[]): void {
  const extras = request.extras;
  if (extras === undefined) return;
  if (extras.protocol !== target) {
    for (const field of Object.keys(extras.fields)) warnings.push(foreignExtraWarning(field, extras.protocol, target));
    return;
  }
  for (const [field, value] of Object.entries(extras.fields)) {
    const current = ownField(body, field);
    if (current === undefined) setOwn(body, field, value);
    else if (Array.isArray(current) && Array.isArray(value)) body[field] = [...current, ...value];
    else if (isRecord(current) && isRecord(value)) body[field] = { ...value, ...current };
  }
}

function foreignExtraWarning(field: string, source: ProtocolId, target: ProtocolId): IrWarning {
  if (field === "tools" || field === "tool_choice") {
    return {
      code: "unsupported_tool",
      field,
      message: `provider-hosted tools from ${source} cannot be sent to a ${target} upstream; dropped`,
    };
  }
  return { code: "unsupported_field", field, message: `${field} from ${source} has no equivalent in ${target}; dropped` };
}

/** Collects every key of `body` not in `mapped` (and not stripped) as extras fields. */
export function collectUnmapped(body: JsonObject, mapped: ReadonlySet<string>, stripped: ReadonlySet<string>): JsonObject {
  const fields: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (!mapped.has(key) && !stripped.has(key)) setOwn(fields, key, value);
  }
  return fields;
}

export function unsupported(field: string, target: ProtocolId, why = "has no equivalent"): IrWarning {
  return { code: "unsupported_field", field, message: `${field} ${why} in ${target}; dropped` };
}
