import { IrDecodeError, type IrRequest, type IrWarning, type ProtocolId } from "../../ir";
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

/**
 * Switchyard-only fields that must never reach an upstream: `session_id` is a client
 * session tag and `provider` carries routing preferences that are documented but not
 * active yet.
 */
const SWITCHYARD_FIELDS = new Set(["session_id", "provider"]);

/**
 * Collects every key of a client `body` not in `mapped` as extras fields. Switchyard's own
 * fields are left out, and an ignored `provider` is said so in a warning.
 */
export function collectUnmapped(body: JsonObject, mapped: ReadonlySet<string>, warnings: IrWarning[]): JsonObject {
  const fields: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (!mapped.has(key) && !SWITCHYARD_FIELDS.has(key)) setOwn(fields, key, value);
  }
  if (body.provider !== undefined) {
    warnings.push({ code: "unsupported_field", field: "provider", message: "provider routing preferences are not supported yet; ignored" });
  }
  return fields;
}

/**
 * An object field of which one key is mapped (`stream_options.include_usage`,
 * `text.format`, `reasoning.effort`): that key's value. The field's other keys ride in
 * extras under the field's name.
 */
export function readPartlyMapped(body: JsonObject, field: string, key: string, extraFields: JsonObject): unknown {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new IrDecodeError(`${field} must be an object`);
  const { [key]: mapped, ...others } = value;
  if (Object.keys(others).length > 0) extraFields[field] = others;
  return mapped;
}

export function unsupported(field: string, target: ProtocolId, why = "has no equivalent"): IrWarning {
  return { code: "unsupported_field", field, message: `${field} ${why} in ${target}; dropped` };
}
