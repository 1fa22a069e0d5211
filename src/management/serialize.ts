/** RFC 3339 timestamps, or null: the management envelopes' date format. */
export function isoOrNull(value: Date | null | undefined): string | null {
  return value ? value.toISOString() : null;
}
