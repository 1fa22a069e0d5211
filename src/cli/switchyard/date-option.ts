import { UsageError } from "./cli-error";
import type { CommandContext } from "./command";
import { optionValue } from "./parse-args";

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * A `--from` / `--to` option: an RFC 3339 date-time as given, or a plain date as its
 * midnight UTC; undefined when absent, anything else bad usage (exit 2, never sent).
 */
export function dateOption(context: CommandContext, name: "from" | "to"): string | undefined {
  const value = optionValue(context.args, name);
  if (value === undefined) return undefined;
  if (DATE_ONLY.test(value)) return `${value}T00:00:00Z`;
  if (DATE_TIME.test(value)) return value;
  throw new UsageError(`--${name} must be a date (2026-11-01) or an RFC 3339 date-time (2026-11-01T12:00:00Z)`, context.usage);
}
