import { irError, upstreamAuthError, type IrError } from "../../ir";
import { isRecord, type JsonObject } from "./read-fields";

/**
 * Maps an OpenAI-style upstream error onto a kind of the error table. Sources:
 * platform.openai.com/docs/guides/error-codes (401 invalid key, 403 unsupported region,
 * 429 rate limit vs `insufficient_quota`, 500/503 server errors) and the Responses
 * `response.failed` error codes (`server_error`, `rate_limit_exceeded`, `invalid_prompt`, …).
 *
 * `status` is undefined for an error that arrived inside a 200 stream; then the `type` /
 * `code` strings decide.
 */
export function decodeOpenAiError(status: number | undefined, body: unknown, headers: Record<string, string> = {}): IrError {
  const errorValue = isRecord(body) && body.error !== undefined ? body.error : body;
  const fields = isRecord(errorValue) ? errorValue : {};
  const type = typeof fields.type === "string" ? fields.type : "";
  const code = typeof fields.code === "string" ? fields.code : "";
  const message = upstreamMessageOf(errorValue) ?? (status !== undefined ? `upstream returned HTTP ${status}` : "upstream stream error");

  if (isPolicyViolation(type, code)) return irError("upstream_policy_violation", message);
  if (type === "insufficient_quota" || code === "insufficient_quota") return irError("upstream_payment_required", message);
  if (status === 429 || RATE_LIMIT_TYPES.has(type) || RATE_LIMIT_TYPES.has(code)) {
    const retryAfter = retryAfterSeconds(headers);
    return irError("upstream_rate_limited", message, retryAfter === undefined ? {} : { retryAfter });
  }
  if (status === 402) return irError("upstream_payment_required", message);
  if (status === 401 || status === 403) return upstreamAuthError(status, message);
  if (status === 413) return irError("payload_too_large", message);
  if (status === 408) return irError("upstream_timeout", message);
  if (status !== undefined && status >= 400 && status < 500) {
    return irError("invalid_request", message, { upstreamError: errorValue ?? message });
  }
  if (status !== undefined) return irError("upstream_bad_gateway", "upstream request failed");

  // No HTTP status (a mid-stream frame): classify by the error's own type.
  if (type === "authentication_error") return upstreamAuthError(401, message);
  if (type === "permission_error") return upstreamAuthError(403, message);
  if (type === "invalid_request_error" || CLIENT_ERROR_CODES.has(code)) {
    return irError("invalid_request", message, { upstreamError: errorValue });
  }
  return irError("upstream_bad_gateway", message);
}

/**
 * An error that arrived inside a 200 stream, as each OpenAI wire frames it: chat
 * `data: {"error":{…}}`; Responses `event: error` with the error nested under `error`
 * (a recorded insufficient_quota: `{"type":"error","sequence_number":2,"error":{"type":
 * "insufficient_quota","code":"insufficient_quota","message":…}}`) or, in older streams,
 * `code` and `message` on the event itself; `response.failed`'s `response.error`. The
 * nested error is what is read: the wrapper's own `type` ("error") names no kind. An
 * integer `code` from 400 to 599 is the HTTP status a compatible provider put there
 * (`{"error":{"message":"bad request","type":"provider_error","code":400}}`).
 */
export function decodeOpenAiStreamError(frame: JsonObject): IrError {
  const error = frame.error !== undefined && frame.error !== null ? frame.error : frame;
  const code = isRecord(error) ? error.code : undefined;
  const status = typeof code === "number" && Number.isInteger(code) && code >= 400 && code <= 599 ? code : undefined;
  return decodeOpenAiError(status, { error });
}

const RATE_LIMIT_TYPES = new Set(["rate_limit_error", "tokens_limit_error", "requests_limit_error", "rate_limit_exceeded"]);

/** Responses `response.failed` codes that blame the input rather than the upstream. */
const CLIENT_ERROR_CODES = new Set([
  "invalid_image",
  "invalid_image_format",
  "invalid_base64_image",
  "invalid_image_url",
  "image_too_large",
  "image_too_small",
  "image_parse_error",
  "image_content_policy_violation",
  "invalid_image_mode",
  "image_file_too_large",
  "unsupported_image_media_type",
  "empty_image_file",
  "failed_to_download_image",
  "image_file_not_found",
]);

function isPolicyViolation(type: string, code: string): boolean {
  // `invalid_prompt` is what Responses reports for a prompt flagged under the usage policy.
  return (
    code === "content_policy_violation" ||
    code === "content_filter" ||
    code === "invalid_prompt" ||
    type === "content_policy_violation"
  );
}

function upstreamMessageOf(errorValue: unknown): string | undefined {
  if (typeof errorValue === "string" && errorValue.trim() !== "") return errorValue;
  if (isRecord(errorValue) && typeof errorValue.message === "string" && errorValue.message !== "") return errorValue.message;
  return undefined;
}

/** `Retry-After` in seconds (an HTTP date needs a clock, which codecs do not have), else `retry-after-ms`. */
export function retryAfterSeconds(headers: Record<string, string>): number | undefined {
  let seconds: string | undefined;
  let milliseconds: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (lower === "retry-after") seconds = value;
    else if (lower === "retry-after-ms") milliseconds = value;
  }
  const parsedSeconds = seconds === undefined ? Number.NaN : Number(seconds.trim());
  if (Number.isFinite(parsedSeconds) && parsedSeconds >= 0) return Math.ceil(parsedSeconds);
  const parsedMilliseconds = milliseconds === undefined ? Number.NaN : Number(milliseconds.trim());
  if (Number.isFinite(parsedMilliseconds) && parsedMilliseconds >= 0) return Math.ceil(parsedMilliseconds / 1000);
  return undefined;
}
