import type { IrWarning } from "../ir";

/** What the gateway changed or dropped in translation, for the client (`x-switchyard-warnings`). */
export function warningsHeader(warnings: IrWarning[]): Record<string, string> {
  if (warnings.length === 0) return {};
  const summary = warnings.map((w) => (w.field ? `${w.code}:${w.field}` : w.code));
  // Field names come from the client's body: anything outside printable ASCII (a NUL, an
  // emoji, a newline) would make the header invalid and the response fail, so it is replaced.
  const value = [...new Set(summary)].join(", ").slice(0, 2000).replace(/[^\x20-\x7e]/g, "?");
  return { "x-switchyard-warnings": value };
}
