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

/** Seconds to wait after a replica cancelled a read: a retry finds replay moved on. */
export const REPLICA_CONFLICT_RETRY_SECS = 1;

/**
 * The answer to a read the replica cancelled (src/db/errors.ts `isReplicaConflict`): a 503
 * with Retry-After, never a 500 (the read was fine; the replica needed its rows back to keep
 * up with the primary).
 */
export function replicaConflict(): ApiError<"service_unavailable"> {
  return new ApiError(
    "service_unavailable",
    "the read replica stopped this read to apply the primary's latest changes (a conflict with recovery); retry it, and if it keeps happening narrow it (a shorter from/to range, filters, after=<next_after>) so it runs shorter",
    { retryAfter: REPLICA_CONFLICT_RETRY_SECS },
  );
}
