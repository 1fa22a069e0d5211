/** PostgreSQL SQLSTATE 23505: a unique constraint refused the row. */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}
