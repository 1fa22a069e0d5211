/** A cell: text, or null/undefined shown as "-". */
export type Cell = string | number | boolean | null | undefined;

function cellText(cell: Cell): string {
  if (cell === null || cell === undefined || cell === "") return "-";
  return String(cell);
}

/**
 * Columns aligned on the widest cell, two spaces apart, headers in capitals. Numeric
 * columns (named in `rightAligned`) line up on their last digit.
 */
export function formatTable(headers: string[], rows: Cell[][], rightAligned: ReadonlySet<number> = new Set()): string {
  const texts = rows.map((row) => headers.map((_, column) => cellText(row[column])));
  const widths = headers.map((header, column) => Math.max(header.length, ...texts.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => {
        if (rightAligned.has(column)) return cell.padStart(widths[column]!);
        return column === cells.length - 1 ? cell : cell.padEnd(widths[column]!);
      })
      .join("  ")
      .trimEnd();
  return [line(headers.map((header) => header.toUpperCase())), ...texts.map(line)].join("\n");
}

/** Label/value pairs, one a line, values aligned. */
export function formatFields(fields: [string, Cell][]): string {
  const width = Math.max(...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `${label.padEnd(width)}  ${cellText(value)}`).join("\n");
}

/**
 * Integer micro-USD as dollars, with every significant micro-dollar kept:
 * 1500000 → "$1.50", 1234 → "$0.001234", -250000 → "-$0.25". Null (unknown) → "-".
 */
export function formatMicroUsd(microUsd: number | null | undefined): string {
  if (microUsd === null || microUsd === undefined || !Number.isFinite(microUsd)) return "-";
  const sign = microUsd < 0 ? "-" : "";
  const magnitude = Math.abs(Math.trunc(microUsd));
  const dollars = Math.floor(magnitude / 1_000_000);
  const fraction = String(magnitude % 1_000_000).padStart(6, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${sign}$${dollars.toLocaleString("en-US")}.${fraction}`;
}

/** A policy's or preset's state: "enabled", or "disabled" and since when. */
export function formatEnabledState(disabledAt: string | null): string {
  return disabledAt ? `disabled ${formatTimestamp(disabledAt)}` : "enabled";
}

/** An RFC 3339 timestamp shortened to the second, in UTC: "2026-11-23 23:41:07Z". */
export function formatTimestamp(value: string | null | undefined): string {
  if (!value) return "-";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return `${date.toISOString().slice(0, 19).replace("T", " ")}Z`;
}
