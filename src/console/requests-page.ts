import type { RequestRecordEnvelope } from "../management/usage/usage-service";
import type { Pagination } from "../management/usage/query-params";
import { formatCount, formatTime, formatUsd } from "./format";
import { html } from "./html";
import { managementLayout } from "./management-layout";
import type { ManagementRequest } from "./management-request";

/** How a request was paid for, in words. */
const FUNDING: Record<string, string> = { cloud_credit: "Wallet (cloud credit)", byok: "Own provider key (BYOK)" };

function charge(record: RequestRecordEnvelope): string {
  if (record.final_charge_micro_usd !== null) return formatUsd(record.final_charge_micro_usd);
  // An unknown charge is never shown as free.
  return record.billing_status === "not_charged" ? "not charged" : "unknown";
}

function requestItem(record: RequestRecordEnvelope) {
  return html`<li><dl>
<dt>Time</dt><dd>${formatTime(new Date(record.created_at))}</dd>
<dt>Model</dt><dd>${record.model_id ?? "(none)"}${record.routing_preset ? html` via @${record.routing_preset}` : ""}</dd>
<dt>Provider</dt><dd>${record.provider_id ?? "(none)"}</dd>
<dt>Status</dt><dd>${record.status} (${record.status_code})${record.refused_by ? html`: ${record.refused_by.reason}` : ""}</dd>
<dt>Tokens in / out</dt><dd>${formatCount(record.prompt_tokens)} / ${formatCount(record.completion_tokens)}</dd>
<dt>Charge</dt><dd>${charge(record)}</dd>
<dt>Paid by</dt><dd>${record.funding_source === null ? "(nothing)" : (FUNDING[record.funding_source] ?? record.funding_source)}</dd>
<dt>Request id</dt><dd><code>${record.request_id}</code></dd>
</dl></li>`;
}

/** The namespace's request history, newest first, a page at a time (metadata only: never a prompt or a response). */
export function requestsPage(req: ManagementRequest, records: readonly RequestRecordEnvelope[], page: Pagination): Response {
  const link = (offset: number) => `/console/requests?${new URLSearchParams({ ns: req.namespace.id, limit: String(page.limit), offset: String(offset) })}`;
  const newer = page.offset > 0 ? html`<a href="${link(Math.max(0, page.offset - page.limit))}" rel="prev">Newer requests</a>` : "";
  // A full page may have more behind it; the next page says so when it is empty.
  const older = records.length === page.limit ? html`<a href="${link(page.offset + page.limit)}" rel="next">Older requests</a>` : "";
  const from = page.offset + 1;
  const body = html`<section aria-labelledby="requests-heading"><h2 id="requests-heading">Requests of ${req.namespace.name}</h2>
${
  records.length === 0
    ? html`<p>${page.offset === 0 ? "No requests yet." : "No more requests."}</p>`
    : html`<p class="hint">Requests ${formatCount(from)} to ${formatCount(page.offset + records.length)}, newest first.</p><ul class="items">${records.map(requestItem)}</ul>`
}
${newer || older ? html`<nav aria-label="Pages"><ul><li>${newer}</li><li>${older}</li></ul></nav>` : ""}</section>`;
  return managementLayout(req, { path: "/console/requests", title: "Requests", state: {}, body });
}
