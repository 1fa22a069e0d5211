import type { ApiKeyRow } from "../db/queries/api-keys";
import type { RequestRecordEnvelope } from "../management/usage/usage-service";
import type { Pagination } from "../management/usage/query-params";
import { formatCount, formatTime } from "./format";
import { html } from "./html";
import { managementLayout, selectOptions } from "./management-layout";
import type { ManagementRequest } from "./management-request";
import { chargeText, credentialText, durationText, paidByText, statusText, type KeyNames } from "./request-columns";
import { FILTER_NAMES, type RequestFilterFields } from "./request-filters";

export interface RequestsView {
  records: readonly RequestRecordEnvelope[];
  page: Pagination;
  filters: RequestFilterFields;
  keys: readonly ApiKeyRow[];
  models: readonly string[];
}

/** A URL of this page (or the CSV export) with the filters, the namespace and `extra`. */
export function requestsUrl(path: string, namespaceId: string, filters: RequestFilterFields, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({ ns: namespaceId });
  for (const name of FILTER_NAMES) if (filters[name]) query.set(name, filters[name]!);
  for (const [name, value] of Object.entries(extra)) query.set(name, value);
  return `${path}?${query}`;
}

function requestRow(req: ManagementRequest, record: RequestRecordEnvelope, keys: KeyNames, filters: RequestFilterFields) {
  // The filters ride along, so the request's page leads back to the same list.
  const detail = requestsUrl(`/console/requests/${encodeURIComponent(record.id)}`, req.namespace.id, filters);
  return html`<tr${record.status === "succeeded" ? "" : html` class="failed"`}>
<td data-label="Time" class="time"><a href="${detail}">${formatTime(new Date(record.created_at))}</a></td>
<td data-label="Key">${credentialText(record, keys)}</td>
<td data-label="Model" class="wrap">${record.model_id ?? "—"}${record.routing_preset ? html` <span class="hint">via @${record.routing_preset}</span>` : ""}</td>
<td data-label="Provider">${record.provider_id ?? "—"}</td>
<td data-label="Status">${statusText(record)}${record.refused_by ? html` <span class="hint">(policy)</span>` : ""}</td>
<td data-label="Tokens in" class="num">${formatCount(record.prompt_tokens)}</td>
<td data-label="Tokens out" class="num">${formatCount(record.completion_tokens)}</td>
<td data-label="Cost" class="num">${chargeText(record)}</td>
<td data-label="Latency" class="num">${durationText(record.request_duration_ms)}</td>
<td data-label="First token" class="num">${durationText(record.ttft_ms)}</td>
<td data-label="Paid by">${paidByText(record)}</td>
</tr>`;
}

function filterForm(req: ManagementRequest, view: RequestsView) {
  const { filters } = view;
  return html`<form class="card wide" method="get" action="/console/requests" aria-labelledby="filters-heading">
<h2 id="filters-heading">Filter</h2>
<input type="hidden" name="ns" value="${req.namespace.id}">
<div class="filters">
<div><label for="filter-status">Status</label><select id="filter-status" name="status">${selectOptions(
    [
      ["", "Any"],
      ["succeeded", "Succeeded"],
      ["failed", "Failed"],
      ["cancelled", "Cancelled"],
    ],
    filters.status ?? "",
  )}</select></div>
<div><label for="filter-key">Key</label><select id="filter-key" name="api_key_id">${selectOptions(
    [["", "Any"] as const, ...view.keys.map((key) => [key.id, key.display_name] as const)],
    filters.api_key_id ?? "",
  )}</select></div>
<div><label for="filter-model">Model</label><select id="filter-model" name="model_id">${selectOptions(
    [["", "Any"] as const, ...view.models.map((model) => [model, model] as const)],
    filters.model_id ?? "",
  )}</select></div>
<div><label for="filter-streamed">Streamed</label><select id="filter-streamed" name="streamed">${selectOptions(
    [
      ["", "Either"],
      ["true", "Streamed"],
      ["false", "Not streamed"],
    ],
    filters.streamed ?? "",
  )}</select></div>
<div><label for="filter-from">From (UTC day)</label><input id="filter-from" name="from" type="date" value="${filters.from ?? ""}"></div>
<div><label for="filter-to">To (UTC day, included)</label><input id="filter-to" name="to" type="date" value="${filters.to ?? ""}"></div>
</div>
<button type="submit">Apply</button> <a href="/console/requests?ns=${encodeURIComponent(req.namespace.id)}">Clear</a>
</form>`;
}

/** The namespace's request history as a table, newest first, filtered and paged through the URL (metadata only: never a prompt or a response). */
export function requestsPage(req: ManagementRequest, view: RequestsView): Response {
  const { records, page, filters } = view;
  const keys: KeyNames = new Map(view.keys.map((key) => [key.id, key.display_name]));
  const link = (offset: number) => requestsUrl("/console/requests", req.namespace.id, filters, { limit: String(page.limit), offset: String(offset) });
  const newer = page.offset > 0 ? html`<a href="${link(Math.max(0, page.offset - page.limit))}" rel="prev">Newer requests</a>` : "";
  // A full page may have more behind it; the next page says so when it is empty.
  const older = records.length === page.limit ? html`<a href="${link(page.offset + page.limit)}" rel="next">Older requests</a>` : "";
  const filtered = FILTER_NAMES.some((name) => filters[name]);
  const body = html`${filterForm(req, view)}
<section aria-labelledby="requests-heading"><h2 id="requests-heading">Requests of ${req.namespace.name}</h2>
${
  records.length === 0
    ? html`<p>${page.offset > 0 ? "No more requests." : filtered ? "No request matches these filters." : "No requests yet."}</p>`
    : html`<p class="hint">Requests ${formatCount(page.offset + 1)} to ${formatCount(page.offset + records.length)}${filtered ? " matching the filters" : ""}, newest first. Select a time for the request's details.
<a href="${requestsUrl("/console/requests.csv", req.namespace.id, filters)}" download>Download all ${filtered ? "matching " : ""}requests as CSV</a></p>
<div class="scroll"><table class="dense" id="requests-table">
<thead><tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">Model</th><th scope="col">Provider</th><th scope="col">Status</th><th scope="col" class="num">Tokens in</th><th scope="col" class="num">Tokens out</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Latency</th><th scope="col" class="num">First token</th><th scope="col">Paid by</th></tr></thead>
<tbody>${records.map((record) => requestRow(req, record, keys, filters))}</tbody></table></div>`
}
${newer || older ? html`<nav aria-label="Pages"><ul><li>${newer}</li><li>${older}</li></ul></nav>` : ""}</section>`;
  return managementLayout(req, { path: "/console/requests", title: "Requests", state: {}, body });
}
