const USD = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 6 });
const COUNT = new Intl.NumberFormat("en-US");

/** Integer micro-USD shown in dollars: two decimals, more only when a sub-cent amount needs them. */
export function formatUsd(microUsd: number): string {
  return USD.format(microUsd / 1_000_000);
}

export function formatCount(value: number): string {
  return COUNT.format(value);
}

/** A date as `2026-11-23 23:41 UTC`: unambiguous wherever the reader is. */
export function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** A request's time as `2026-11-23 23:41:07 UTC`: requests a few seconds apart must read apart. */
export function formatSecond(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A count with its noun: `1 request`, `2 requests`. */
export function countOf(value: number, noun: string): string {
  return `${formatCount(value)} ${value === 1 ? noun : `${noun}s`}`;
}
