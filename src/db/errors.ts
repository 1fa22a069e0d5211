/** PostgreSQL SQLSTATE 23505: a unique constraint refused the row. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}

/** The SQLSTATE of an error PostgreSQL reported, or undefined for anything else. */
export function sqlState(error: unknown): string | undefined {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/**
 * PostgreSQL refused the data itself, and will refuse it again however often it is sent:
 * SQLSTATE class 22 (data exception: a NUL byte, an invalid escape, a number out of
 * range), 23 (integrity constraint violation) or 54 (program limit exceeded: an index
 * entry or a value too large). Everything else — a lost connection (08, 57P0x), a
 * shutdown, a deadlock or serialization failure (40), lack of resources (53), a read-only
 * standby after a failover (25006), a driver error without SQLSTATE — may pass on retry.
 */
export function isDataRejection(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== "PostgresError") return false;
  const code = sqlState(error);
  return code !== undefined && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}

const FROM_READ_POOL = Symbol("fromReadPool");

/**
 * Marks an error as a statement's of the read pool (connect-database.ts): some errors mean
 * something else there, a replica's conflict with recovery (SQLSTATE 40001) above all,
 * which a statement on the primary pool cannot meet.
 */
export function markAsReadPoolError(error: unknown): void {
  if (typeof error === "object" && error !== null && !(FROM_READ_POOL in error)) Object.defineProperty(error, FROM_READ_POOL, { value: true });
}

/** Whether a statement of the read pool failed with this error (markAsReadPoolError). */
export function isReadPoolError(error: unknown): boolean {
  return typeof error === "object" && error !== null && FROM_READ_POOL in error;
}

/**
 * SQLSTATE 57014, query_canceled: what PostgreSQL reports when `statement_timeout` stops a
 * statement. Only the read pool's connections carry that timeout (connect-database.ts);
 * nothing in this process cancels statements otherwise, so on this path it means a read ran
 * too long.
 */
const QUERY_CANCELED = "57014";

export function isStatementTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === "PostgresError" && sqlState(error) === QUERY_CANCELED;
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
