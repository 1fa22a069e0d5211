import { IR_ERROR_TABLE, type IrError } from "../../ir";

export interface EncodedError {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * Renders an IrError in the OpenAI envelope `{error:{message, type, code}}`.
 * An upstream 400 passes the upstream's own error through unchanged so the client sees the
 * real validation message; upstream auth failures keep the upstream's 401/403.
 */
export function encodeOpenAiError(error: IrError): EncodedError {
  const status = error.status;
  const headers: Record<string, string> = {};
  if (status === 401) headers["WWW-Authenticate"] = 'Bearer realm="switchyard"';
  // Rate limits and temporary unavailability say when to come back.
  if ((status === 429 || status === 503) && error.retryAfter !== undefined) headers["Retry-After"] = String(Math.max(0, Math.ceil(error.retryAfter)));
  if (error.kind === "invalid_request" && status === 400 && error.upstreamError !== undefined) {
    return { status, body: { error: error.upstreamError }, headers };
  }
  return { status, body: { error: openAiErrorObject(error) }, headers };
}

/** The inner `{message, type, code}` object, also used by mid-stream error frames. */
export function openAiErrorObject(error: IrError): { message: string; type: string; code: string } {
  const row = IR_ERROR_TABLE[error.kind];
  // An upstream auth failure answered with 403 is a permission error.
  const type = error.kind === "upstream_auth_required" && error.status === 403 ? "permission_error" : row.type;
  return { message: error.message, type, code: row.code };
}
