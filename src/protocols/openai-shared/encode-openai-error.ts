import { ERROR_TABLE } from "../../errors/error-table";
import { renderedKind, type IrError } from "../../ir";
import { errorHeaders } from "../shared/error-headers";

export interface EncodedError {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * Renders an IrError in the OpenAI envelope `{error:{message, type, code}}`, type and code
 * from the error table. An upstream 400 passes the upstream's own error through unchanged so
 * the client sees the real validation message.
 */
export function encodeOpenAiError(error: IrError): EncodedError {
  const headers = errorHeaders(error);
  if (error.kind === "invalid_request" && error.upstreamError !== undefined) {
    return { status: error.status, body: { error: error.upstreamError }, headers };
  }
  return { status: error.status, body: { error: openAiErrorObject(error) }, headers };
}

/** The inner `{message, type, code}` object, also used by mid-stream error frames. */
export function openAiErrorObject(error: IrError): { message: string; type: string; code: string } {
  return { message: error.message, type: ERROR_TABLE[renderedKind(error)].type, code: ERROR_TABLE[error.kind].code };
}
