/**
 * The one error table (docs/errors.md): each kind of error, its HTTP status, and its name on
 * every surface that answers it. Inference clients read it in their own protocol (OpenAI
 * chat and Responses, Anthropic Messages, Google generateContent), management clients as
 * `{ error: <management name>, error_description }` (docs/api/credentials.md "Credentials and
 * scopes"; the official management client parses exactly this, including the "missing
 * required scope: " prefix), OAuth clients as RFC 6749 §5.2 `{ error: <OAuth name>,
 * error_description }`. A kind without a surface's names is never answered there: the
 * surface that meets one answers it as its own fault.
 */
export type ErrorKind =
  | "invalid_request"
  | "client_timeout"
  | "authentication"
  | "payment_required"
  | "upstream_payment_required"
  | "budget_exceeded"
  | "permission_denied"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "rate_limited"
  | "upstream_rate_limited"
  | "upstream_policy_violation"
  | "upstream_bad_gateway"
  | "upstream_invalid_response"
  | "upstream_auth_required"
  | "upstream_timeout"
  | "upstream_unavailable"
  | "internal"
  | "service_unavailable"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "authorization_pending"
  | "slow_down"
  | "access_denied"
  | "expired_token";

/** A kind's names in the inference protocols; all four, or none. */
interface InferenceNames {
  /** The kind as inference clients read it: OpenAI `error.code`, Google `error.details[].reason`. */
  code: string;
  /** OpenAI `error.type` (chat and Responses). */
  type: string;
  /**
   * Anthropic Messages `error.type` (https://docs.anthropic.com/en/api/errors): 400
   * invalid_request_error, 401 authentication_error, 402 billing_error, 403 permission_error,
   * 404 not_found_error, 413 request_too_large, 429 rate_limit_error, 500 api_error, 504
   * timeout_error, 529 overloaded_error (which Anthropic clients retry with backoff, what a
   * 503 wants).
   */
  anthropicType: string;
  /**
   * Google `error.status`, a google.rpc status name
   * (https://ai.google.dev/gemini-api/docs/troubleshooting,
   * https://cloud.google.com/apis/design/errors#handling_errors). Google has no payment
   * status: FAILED_PRECONDITION is what the Gemini API answers when billing must be enabled.
   * Google clients retry UNAVAILABLE, the right reaction to a bad gateway as well.
   */
  googleStatus: string;
}

type ErrorRow = {
  status: number;
  /**
   * For a kind that keeps the status it was given (an upstream's): each other status it may
   * take, and the kind whose protocol names (OpenAI `type`, Anthropic `error.type`, Google
   * `status`) the error then renders with. Its code stays its own.
   */
  alsoStatus?: Readonly<Record<number, ErrorKind>>;
  /** The management API's `error`. */
  management?: string;
  /** The OAuth endpoints' `error` (RFC 6749 §5.2, RFC 8628 §3.5, RFC 7009 §2.2.1). */
  oauth?: string;
} & (InferenceNames | { [Name in keyof InferenceNames]?: never });

export const ERROR_TABLE = {
  invalid_request: { status: 400, code: "invalid_request", type: "invalid_request_error", anthropicType: "invalid_request_error", googleStatus: "INVALID_ARGUMENT", management: "bad_request", oauth: "invalid_request" },
  // A streaming client that stopped reading: its own doing, so a request error.
  client_timeout: { status: 408, code: "invalid_request", type: "invalid_request_error", anthropicType: "invalid_request_error", googleStatus: "INVALID_ARGUMENT" },
  authentication: { status: 401, code: "authentication_error", type: "authentication_error", anthropicType: "authentication_error", googleStatus: "UNAUTHENTICATED", management: "unauthorized" },
  payment_required: { status: 402, code: "payment_required", type: "payment_required", anthropicType: "billing_error", googleStatus: "FAILED_PRECONDITION", management: "payment_required" },
  upstream_payment_required: { status: 402, code: "upstream_payment_required", type: "payment_required", anthropicType: "billing_error", googleStatus: "FAILED_PRECONDITION" },
  budget_exceeded: { status: 402, code: "budget_exceeded", type: "payment_required", anthropicType: "billing_error", googleStatus: "FAILED_PRECONDITION" },
  permission_denied: { status: 403, code: "permission_denied", type: "permission_error", anthropicType: "permission_error", googleStatus: "PERMISSION_DENIED", management: "forbidden" },
  not_found: { status: 404, code: "not_found", type: "not_found_error", anthropicType: "not_found_error", googleStatus: "NOT_FOUND", management: "not_found" },
  conflict: { status: 409, management: "conflict" },
  payload_too_large: { status: 413, code: "payload_too_large", type: "invalid_request_error", anthropicType: "request_too_large", googleStatus: "INVALID_ARGUMENT", management: "payload_too_large" },
  rate_limited: { status: 429, code: "rate_limit_exceeded", type: "rate_limit_error", anthropicType: "rate_limit_error", googleStatus: "RESOURCE_EXHAUSTED", management: "too_many_requests" },
  upstream_rate_limited: { status: 429, code: "upstream_rate_limited", type: "rate_limit_error", anthropicType: "rate_limit_error", googleStatus: "RESOURCE_EXHAUSTED" },
  upstream_policy_violation: { status: 403, code: "upstream_policy_violation", type: "permission_error", anthropicType: "permission_error", googleStatus: "PERMISSION_DENIED" },
  upstream_bad_gateway: { status: 502, code: "upstream_bad_gateway", type: "upstream_error", anthropicType: "api_error", googleStatus: "UNAVAILABLE" },
  upstream_invalid_response: { status: 502, code: "upstream_invalid_response", type: "upstream_error", anthropicType: "api_error", googleStatus: "INTERNAL" },
  // An upstream that refuses our credential keeps its status: its 403 stays a 403, a permission error.
  upstream_auth_required: { status: 401, code: "upstream_auth_required", type: "authentication_error", anthropicType: "authentication_error", googleStatus: "UNAUTHENTICATED", alsoStatus: { 403: "permission_denied" } },
  upstream_timeout: { status: 504, code: "upstream_timeout", type: "upstream_error", anthropicType: "timeout_error", googleStatus: "DEADLINE_EXCEEDED" },
  upstream_unavailable: { status: 503, code: "upstream_unavailable", type: "upstream_error", anthropicType: "overloaded_error", googleStatus: "UNAVAILABLE" },
  internal: { status: 500, code: "internal_error", type: "internal_error", anthropicType: "api_error", googleStatus: "INTERNAL", management: "internal" },
  // Ours, and temporary (the database unreachable, shutdown): retry, here or elsewhere.
  service_unavailable: { status: 503, code: "internal_error", type: "internal_error", anthropicType: "api_error", googleStatus: "INTERNAL", management: "service_unavailable" },
  // A client that failed authentication through the Authorization header gets a 401 with a
  // challenge (RFC 6749 §5.2); any other failed client authentication is a 400.
  invalid_client: { status: 400, oauth: "invalid_client", alsoStatus: { 401: "invalid_client" } },
  invalid_grant: { status: 400, oauth: "invalid_grant" },
  unauthorized_client: { status: 400, oauth: "unauthorized_client" },
  unsupported_grant_type: { status: 400, oauth: "unsupported_grant_type" },
  invalid_scope: { status: 400, oauth: "invalid_scope" },
  authorization_pending: { status: 400, oauth: "authorization_pending" },
  slow_down: { status: 400, oauth: "slow_down" },
  access_denied: { status: 400, oauth: "access_denied" },
  expired_token: { status: 400, oauth: "expired_token" },
} as const satisfies Record<ErrorKind, ErrorRow>;

type Row<K extends ErrorKind> = (typeof ERROR_TABLE)[K];

/** The kinds whose row has `column`. */
type KindsWith<Column extends string> = { [K in ErrorKind]: Row<K> extends Record<Column, string> ? K : never }[ErrorKind];

/** The kinds inference clients are answered with, in their protocol. */
export type IrErrorKind = KindsWith<"code">;
/** The kinds the management API answers. */
export type ManagementErrorKind = KindsWith<"management">;
/** The kinds the OAuth endpoints answer in RFC 6749 §5.2 shape. */
export type OauthErrorKind = KindsWith<"oauth">;
/** The management name of a kind of `K`; undefined for a kind the management API never answers. */
export type ManagementCodeOf<K extends ErrorKind> = K extends ManagementErrorKind ? Row<K>["management"] : undefined;
export type OauthErrorCode = Row<OauthErrorKind>["oauth"];

/** The statuses the table gives a kind besides its own (only a kind that keeps the status it was given has any). */
type OtherStatus<K extends ErrorKind> = K extends K ? (Row<K> extends { alsoStatus: infer Other } ? keyof Other : never) : never;
/** The statuses an error of kind `K` may have: the table's, or one of its other statuses. */
export type ErrorStatus<K extends ErrorKind> = Row<K>["status"] | OtherStatus<K>;

/** Every kind the inference protocols name, in the table's order. */
export const IR_ERROR_KINDS = (Object.keys(ERROR_TABLE) as ErrorKind[]).filter((kind): kind is IrErrorKind => "code" in ERROR_TABLE[kind]);

/** Whether the table lets an error of `kind` have `status`: its own, or one of its other statuses. */
export function isStatusOf(kind: ErrorKind, status: number): boolean {
  const row: ErrorRow = ERROR_TABLE[kind];
  return status === row.status || row.alsoStatus?.[status] !== undefined;
}

/** The kind whose protocol names an inference error renders with: its own, or the one the table names for the status it kept. */
export function renderedKind(error: { kind: IrErrorKind; status: number }): IrErrorKind {
  const row: ErrorRow = ERROR_TABLE[error.kind];
  return (row.alsoStatus?.[error.status] as IrErrorKind | undefined) ?? error.kind;
}
