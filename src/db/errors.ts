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
