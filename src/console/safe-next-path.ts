/**
 * Where to go after signing in: only a path on this server. Accepted: a relative path
 * that starts with exactly one `/`. Refused: `//host` and `/\host` (browsers read both
 * as another host), anything with a scheme, backslashes, whitespace or control
 * characters anywhere (browsers drop tabs and newlines from URLs, so `/\t/host` would
 * become `//host`). A refused or missing value is the console's overview.
 */
export function safeNextPath(value: unknown, fallback = "/console"): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 4096) return fallback;
  if (value[0] !== "/" || value[1] === "/" || value[1] === "\\") return fallback;
  // Printable ASCII only, and no backslash: nothing a browser could normalise into another host.
  if (!/^[\x21-\x7e]+$/.test(value) || value.includes("\\")) return fallback;
  return value;
}
