import type { CommandContext } from "./command";
import { formatTable, type Cell } from "./format-table";

/** One block of human-readable output on stdout. */
export function print(context: CommandContext, text: string): void {
  context.io.stdout(text.endsWith("\n") ? text : `${text}\n`);
}

/** A route's JSON body, as `--json` promises: exactly what the server answered. */
export function printJson(context: CommandContext, value: unknown): void {
  context.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** `{ data: T[] }`, the envelope of every management listing. */
export function listData<T>(body: unknown): T[] {
  const data = (body as { data?: unknown } | undefined)?.data;
  return Array.isArray(data) ? (data as T[]) : [];
}

/** How a listing command shows its entries: a table of one row each, or `empty` when there are none. */
export interface Listing<T> {
  empty: string;
  headers: string[];
  row: (entry: T) => Cell[];
  /** Numeric columns, aligned on their last digit. */
  rightAligned?: ReadonlySet<number>;
}

/** A management listing's body: as JSON with `--json`, else as the listing's table. */
export function printListing<T>(context: CommandContext, body: unknown, listing: Listing<T>): void {
  if (context.json) return printJson(context, body);
  const entries = listData<T>(body);
  if (entries.length === 0) return print(context, listing.empty);
  print(context, formatTable(listing.headers, entries.map(listing.row), listing.rightAligned));
}
