import type { IrError } from "../../ir";

/**
 * The headers every protocol's error response carries, decided by the status the error
 * table gave it: a 401 names the scheme to authenticate with (RFC 9110 §11.6.1), and a 429
 * or 503 says when to come back, when that is known (whole seconds).
 */
export function errorHeaders(error: IrError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.status === 401) headers["WWW-Authenticate"] = 'Bearer realm="switchyard"';
  if ((error.status === 429 || error.status === 503) && error.retryAfter !== undefined) headers["Retry-After"] = String(Math.max(0, Math.ceil(error.retryAfter)));
  return headers;
}
