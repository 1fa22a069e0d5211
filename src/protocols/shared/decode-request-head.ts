import { IrDecodeError, type Encoded, type IrMessage, type IrRequest, type IrWarning, type ProtocolId } from "../../ir";
import { readFallbackModels } from "./fallback-models";
import { isRecord, readBoolean, setOwn, type JsonObject } from "./json-fields";

/**
 * What an Anthropic Messages and a Gemini body open with, read alike: a JSON object with
 * a non-empty `model` (Gemini's is put in from the path by the HTTP layer), the turns
 * under `messagesField`, `stream`, and Switchyard's `models` fallbacks.
 */
export function decodeRequestHead(
  body: unknown,
  messagesField: string,
  decodeMessages: (turns: unknown[], warnings: IrWarning[]) => IrMessage[],
): { body: JsonObject; request: IrRequest; warnings: IrWarning[] } {
  if (!isRecord(body)) throw new IrDecodeError("request body must be a JSON object");
  const model = body.model;
  if (typeof model !== "string" || model === "") throw new IrDecodeError("model is required and must be a string");
  const turns = body[messagesField];
  if (!Array.isArray(turns)) throw new IrDecodeError(`${messagesField} must be an array`);

  const warnings: IrWarning[] = [];
  const request: IrRequest = {
    model,
    messages: decodeMessages(turns, warnings),
    params: {},
    stream: readBoolean(body, "stream") ?? false,
  };
  const models = readFallbackModels(body.models);
  if (models !== undefined) request.models = models;
  return { body, request, warnings };
}

/** Every field of `body` outside `mapped` joins `extras`, which the request carries when not empty. */
export function finishRequest(
  body: JsonObject,
  mapped: ReadonlySet<string>,
  extras: JsonObject,
  decoded: { request: IrRequest; warnings: IrWarning[]; protocol: ProtocolId },
): Encoded<IrRequest> {
  const { request, warnings, protocol } = decoded;
  for (const [key, value] of Object.entries(body)) if (!mapped.has(key)) setOwn(extras, key, value);
  if (Object.keys(extras).length > 0) request.extras = { protocol, fields: extras };
  return { value: request, warnings };
}
