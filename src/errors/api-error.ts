import { ERROR_TABLE, type ManagementErrorCode, type ManagementErrorKind } from "./error-table";

/** Each management code's kind in the error table (src/errors/error-table.ts), whose status it has. */
const KIND_OF_MANAGEMENT_CODE = Object.fromEntries(
  Object.entries(ERROR_TABLE).flatMap(([kind, row]) => ("management" in row ? [[row.management, kind]] : [])),
) as Record<ManagementErrorCode, ManagementErrorKind>;

export type ApiErrorCode = ManagementErrorCode;

/**
 * A management error, rendered in its documented shape `{ error: <code>, error_description }`
 * (docs/api/credentials.md "Credentials and scopes"; the official management client parses
 * exactly this, including the "missing required scope: " prefix), with the error table's
 * status for its code.
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ApiErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = "ApiError";
    this.status = ERROR_TABLE[KIND_OF_MANAGEMENT_CODE[code]].status;
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
