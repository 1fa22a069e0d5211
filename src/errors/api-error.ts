import { ERROR_TABLE, isStatusOf, type ErrorKind, type ErrorStatus, type ManagementCodeOf, type ManagementErrorKind, type OauthErrorKind } from "./error-table";

/** What an error carries besides its kind and message. */
export interface ApiErrorDetails<K extends ErrorKind> {
  /** Seconds until a retry may succeed: `Retry-After` on a 429 or 503. */
  retryAfter?: number;
  /** For an upstream 400 passed through to an inference client: the upstream's own error object or string. */
  upstreamError?: unknown;
  /** Only picks among the statuses the table gives the kind (`alsoStatus`); by default the kind's own. */
  status?: ErrorStatus<K>;
  /** Headers its answer carries besides those every answer of its status does (`Connection: close` after a body left unread). */
  headers?: Readonly<Record<string, string>>;
}

/** An error's own fields, as JSON carries them. */
export type ApiErrorFields<K extends ErrorKind> = { kind: K; status: number; message: string } & Omit<ApiErrorDetails<K>, "status">;

/**
 * The one error type: a kind of the error table (src/errors/error-table.ts), the table's
 * status for it, and a message safe to show the caller. Whoever answers the request renders
 * it in its caller's shape: an inference client's protocol (each codec's `encodeError`),
 * the management API's body (`errorResponse`), or OAuth's (src/oauth/oauth-error.ts).
 *
 * It is thrown like any error (`instanceof Error`, logged by its message) but is also a
 * value: decoded from an upstream's answer, carried in stream parts and stage results, and
 * sent to translation workers as JSON. So it is not built by the Error constructor, which
 * would hide its message from JSON and from structural comparison and capture a stack trace
 * on every upstream error: its fields are its own, and absent ones are absent.
 */
export class ApiError<K extends ErrorKind = ErrorKind> implements Error {
  readonly kind: K;
  readonly status: ErrorStatus<K>;
  readonly message: string;
  declare readonly retryAfter?: number;
  declare readonly upstreamError?: unknown;
  declare readonly headers?: Readonly<Record<string, string>>;

  constructor(kind: K, message: string, details: ApiErrorDetails<K> = {}) {
    const status = details.status ?? (ERROR_TABLE[kind].status as ErrorStatus<K>);
    if (!isStatusOf(kind, status)) throw new TypeError(`the error table gives ${kind} no status ${status}`);
    this.kind = kind;
    this.status = status;
    this.message = message;
    if (details.retryAfter !== undefined) this.retryAfter = details.retryAfter;
    if (details.upstreamError !== undefined) this.upstreamError = details.upstreamError;
    if (details.headers !== undefined) this.headers = details.headers;
  }

  get name(): string {
    return "ApiError";
  }

  /** The management API's name for its kind, the `error` of its answer; undefined for a kind that API never answers. */
  get code(): ManagementCodeOf<K> {
    const row = ERROR_TABLE[this.kind as ErrorKind];
    return ("management" in row ? row.management : undefined) as ManagementCodeOf<K>;
  }

  /**
   * The error these fields describe, as an instance: one sent as JSON (to or from a
   * translation worker), or one made from another with a field changed. The status is
   * checked against the table like any other.
   */
  static from<K extends ErrorKind>(fields: ApiErrorFields<K>): ApiError<K> {
    return new ApiError(fields.kind, fields.message, { ...fields, status: fields.status as ErrorStatus<K> });
  }
}
// An Error to every `instanceof Error` and `String(error)`, without the Error constructor (see above).
Object.setPrototypeOf(ApiError.prototype, Error.prototype);

export function isManagementError(error: unknown): error is ApiError<ManagementErrorKind> {
  return error instanceof ApiError && "management" in ERROR_TABLE[error.kind as ErrorKind];
}

export function isOauthError(error: unknown): error is ApiError<OauthErrorKind> {
  return error instanceof ApiError && "oauth" in ERROR_TABLE[error.kind as ErrorKind];
}

export const badRequest = (description: string) => new ApiError("invalid_request", description);
export const notFound = (what: string) => new ApiError("not_found", `${what} not found`);
export const conflict = (description: string) => new ApiError("conflict", description);
export const forbiddenScope = (scope: string) => new ApiError("permission_denied", `missing required scope: ${scope}`);
export const unauthorized = (description = "missing or invalid credential") => new ApiError("authentication", description);

/** A client that failed authentication (OAuth): a 401 when it tried the Authorization header (RFC 6749 §5.2), else a 400. */
export function invalidClient(description: string, throughAuthorizationHeader: boolean): ApiError<"invalid_client"> {
  return new ApiError("invalid_client", description, throughAuthorizationHeader ? { status: 401 } : {});
}

/**
 * A management error as its answer, `{ error: <management name>, error_description }`
 * (docs/api/credentials.md "Credentials and scopes"; the official management client parses
 * exactly this, including the "missing required scope: " prefix). A 401 names the scheme to
 * authenticate with (RFC 9110 §11.6.1); a 429 or 503 says when to come back, when known.
 */
export function errorResponse(error: ApiError<ManagementErrorKind>): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (error.status === 401) headers["www-authenticate"] = 'Bearer realm="switchyard"';
  if ((error.status === 429 || error.status === 503) && error.retryAfter !== undefined) headers["retry-after"] = String(Math.max(0, Math.ceil(error.retryAfter)));
  return new Response(JSON.stringify({ error: error.code, error_description: error.message }), { status: error.status, headers: { ...headers, ...error.headers } });
}
