import { ApiError } from "./api-error";

/**
 * The answer to a read PostgreSQL stopped by its statement timeout (src/db/errors.ts
 * `isStatementTimeout`): a 503 in the management shape that says what to change, never a
 * 500 (the server is fine; the question was too big for one read).
 */
export function queryTooLong(): ApiError<"service_unavailable"> {
  return new ApiError(
    "service_unavailable",
    "the query took too long and was stopped: narrow it with a shorter from/to range or filters (status, model_id, api_key_id, streamed), page with after=<next_after> instead of an offset, then try again",
  );
}
