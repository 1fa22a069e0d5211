import { sqlState } from "../db/errors";
import { ApiError } from "./api-error";

/**
 * SQLSTATE 57014, query_canceled: what PostgreSQL reports when `statement_timeout` stops a
 * statement. Only the read pool's connections carry that timeout (src/db/connect-database.ts);
 * nothing in this process cancels statements otherwise, so on this path it means a read ran
 * too long.
 */
const QUERY_CANCELED = "57014";

export function isStatementTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === "PostgresError" && sqlState(error) === QUERY_CANCELED;
}

/**
 * The answer to a read PostgreSQL stopped: a 503 in the management shape that says what to
 * change, never a 500 (the server is fine; the question was too big for one read).
 */
export function queryTooLong(): ApiError {
  return new ApiError(
    "service_unavailable",
    "the query took too long and was stopped: narrow it with a shorter from/to range or filters (status, model_id, api_key_id, streamed), page with after=<next_after> instead of an offset, then try again",
  );
}
