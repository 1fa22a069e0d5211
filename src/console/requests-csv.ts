import type { RequestRecordEnvelope } from "../management/usage/usage-service";
import { consoleHeaders } from "./console-page";
import { chargeText, credentialText, paidByText, type KeyNames } from "./request-columns";

const COLUMNS: readonly (readonly [string, (record: RequestRecordEnvelope, keys: KeyNames) => string | number | boolean | null])[] = [
  ["created_at", (r) => r.created_at],
  ["request_id", (r) => r.request_id],
  ["key", (r, keys) => credentialText(r, keys)],
  ["api_key_id", (r) => r.api_key_id],
  ["oauth_token_id", (r) => r.oauth_token_id],
  ["model_id", (r) => r.model_id],
  ["provider_id", (r) => r.provider_id],
  ["status", (r) => r.status],
  ["status_code", (r) => r.status_code],
  ["streamed", (r) => r.streamed],
  ["prompt_tokens", (r) => r.prompt_tokens],
  ["completion_tokens", (r) => r.completion_tokens],
  ["final_charge_micro_usd", (r) => r.final_charge_micro_usd],
  ["cost", (r) => chargeText(r)],
  ["billing_status", (r) => r.billing_status],
  ["paid_by", (r) => paidByText(r)],
  ["request_duration_ms", (r) => r.request_duration_ms],
  ["ttft_ms", (r) => r.ttft_ms],
  ["refused_by_policy", (r) => r.refused_by?.policy_id ?? null],
];

/**
 * A text a spreadsheet may read as a formula: its first visible character is `=`, `+`,
 * `-` or `@`, or a tab or carriage return comes first (OWASP "CSV injection"). What may
 * stand before it unseen counts as nothing: whitespace and line breaks (`\s`, no-break and
 * ideographic spaces, U+2028 included), control characters, and invisible format
 * characters (zero-width space and joiners, U+FEFF, word joiner U+2060, bidi controls, soft
 * hyphen: Unicode `Cf`, with the other default-ignorable code points such as U+034F and
 * the Hangul fillers).
 */
const FORMULA_START = /^[\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]*[=+\-@\t\r]/u;

/**
 * One CSV cell (RFC 4180). A text that a spreadsheet would read as a formula
 * (FORMULA_START) gets a leading `'`, so a key or model name typed by anyone can never run
 * in the reader's spreadsheet; numbers are written as numbers.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return "";
  if (typeof value !== "string") return String(value);
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvLine(record: RequestRecordEnvelope, keys: KeyNames): string {
  return `${COLUMNS.map(([, read]) => csvCell(read(record, keys))).join(",")}\r\n`;
}

/**
 * The filtered history as CSV, streamed: `pages` (the history service's `eachRequestPage`,
 * which continues each page where the last ended) is asked for the next page only when the
 * client has taken the previous one, so the export never holds the whole set in memory,
 * and a client that goes away stops the reading.
 */
export function requestsCsvResponse(pages: AsyncIterator<readonly RequestRecordEnvelope[]>, keys: KeyNames, filename: string): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controller.enqueue(encoder.encode(`${COLUMNS.map(([name]) => name).join(",")}\r\n`));
      },
      async pull(controller) {
        const next = await pages.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value.map((row) => csvLine(row, keys)).join("")));
      },
      async cancel() {
        await pages.return?.(undefined);
      },
    },
    { highWaterMark: 0 },
  );
  const headers = consoleHeaders();
  headers.set("content-type", "text/csv; charset=utf-8");
  headers.set("content-disposition", `attachment; filename="${filename}"`);
  return new Response(body, { headers });
}

/**
 * `pages`, calling `release` once when they end: read to the end, failed, or stopped by the
 * stream's cancel (a client gone). A generator's own `finally` would not do: `return()` on
 * a generator that never started skips it, and an export cancelled before its first page
 * would keep its slot forever.
 */
export function heldUntilDone<T>(pages: AsyncIterator<T>, release: () => void): AsyncIterator<T> {
  return {
    async next() {
      try {
        const step = await pages.next();
        if (step.done) release();
        return step;
      } catch (error) {
        release();
        throw error;
      }
    },
    async return(value?: unknown) {
      release();
      return (await pages.return?.(value)) ?? { done: true, value: undefined };
    },
  };
}
