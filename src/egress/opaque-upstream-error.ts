import { ApiError } from "../errors/api-error";
import type { IrError } from "../ir";

/**
 * What the client learns of an error from a customer-supplied upstream address: the
 * gateway's own short description, with the error's kind (so its status and type) and
 * Retry-After kept. The upstream's message and body never pass: that address may be a
 * service the customer cannot otherwise read, and its error would be a way to read it.
 */
export function opaqueUpstreamError(error: IrError, upstreamStatus?: number): IrError {
  const answered = upstreamStatus !== undefined ? `answered HTTP ${upstreamStatus}` : error.kind === "upstream_timeout" ? "timed out" : "failed";
  return ApiError.from({
    kind: error.kind,
    status: error.status,
    message: `the upstream at your key's api_base (BYOK) ${answered}; its message is not shown`,
    ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
  });
}
