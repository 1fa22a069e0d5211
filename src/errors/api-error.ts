/**
 * One error table for everything but inference (which has its own, src/ir/ir-error.ts):
 * kind -> HTTP status. Two families render from it, each in its documented shape: management
 * errors (`ApiError`) as `{ error: <kind>, error_description }` (docs/api/credentials.md
 * "Credentials and scopes"; the official management client parses exactly this, including the "missing
 * required scope: " prefix), and OAuth protocol errors (src/errors/oauth-error.ts) as
 * RFC 6749 §5.2 `{ error: <OAuth code>, error_description }`.
 */
export const API_ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  too_many_requests: 429,
  internal: 500,
  service_unavailable: 503,
} as const;

export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = "ApiError";
    this.status = API_ERROR_STATUS[code];
  }

  body(): { error: ApiErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}

export const badRequest = (description: string) => new ApiError("bad_request", description);
export const notFound = (what: string) => new ApiError("not_found", `${what} not found`);
export const conflict = (description: string) => new ApiError("conflict", description);
export const forbiddenScope = (scope: string) => new ApiError("forbidden", `missing required scope: ${scope}`);
export const unauthorized = (description = "missing or invalid credential") =>
  new ApiError("unauthorized", description, { "www-authenticate": 'Bearer realm="switchyard"' });

export function errorResponse(error: ApiError): Response {
  return new Response(JSON.stringify(error.body()), {
    status: error.status,
    headers: { "content-type": "application/json", ...error.headers },
  });
}
