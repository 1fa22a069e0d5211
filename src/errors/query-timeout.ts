import { isReadPoolError, sqlState } from "../db/errors";
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

/**
 * SQLSTATE 40001 on the read pool: a hot standby (DATABASE_READ_URL) cancelled the read
 * because replaying the primary's changes needed what it was reading ("canceling statement
 * due to conflict with recovery": rows a vacuum on the primary removed, a lock, a dropped
 * table), after its `max_standby_streaming_delay`. Nothing on the read pool runs at an
 * isolation level that could fail serializing, so there it means that; on the primary pool
 * the same code would be something else, and stays the 500 it is.
 */
const SERIALIZATION_FAILURE = "40001";

export function isReplicaConflict(error: unknown): boolean {
  return error instanceof Error && error.name === "PostgresError" && sqlState(error) === SERIALIZATION_FAILURE && isReadPoolError(error);
}

/** Seconds to wait after a replica cancelled a read: a retry finds replay moved on. */
export const REPLICA_CONFLICT_RETRY_SECS = 1;

/**
 * The answer to a read the replica cancelled: a 503 with Retry-After, never a 500 (the read
 * was fine; the replica needed its rows back to keep up with the primary).
 */
export function replicaConflict(): ApiError {
  return new ApiError(
    "service_unavailable",
    "the read replica stopped this read to apply the primary's latest changes (a conflict with recovery); retry it, and if it keeps happening narrow it (a shorter from/to range, filters, after=<next_after>) so it runs shorter",
    { "retry-after": String(REPLICA_CONFLICT_RETRY_SECS) },
  );
}
