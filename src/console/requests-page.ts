import type { ApiKey } from "../identity/api-key-service";
import type { RequestRecordEnvelope } from "../management/usage/usage-service";
import type { HistoryPage } from "../management/usage/query-params";
import { formatCount, formatSecond } from "./format";
import { html } from "./html";
import { managementLayout, selectOptions } from "./management-layout";
import type { ManagementRequest } from "./management-request";
import { chargeText, credentialText, durationText, paidByText, statusText, type KeyNames } from "./request-columns";
import { FILTER_NAMES, type RequestFilterFields } from "./request-filters";

export interface RequestsView {
  records: readonly RequestRecordEnvelope[];
  page: HistoryPage;
  /** The listing's next_after: the last record's id when older ones follow, else null. */
  nextAfter: string | null;
  filters: RequestFilterFields;
  keys: readonly ApiKey[];
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
<td data-label="Time" class="time"><a href="${detail}">${formatSecond(new Date(record.created_at))}</a></td>
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

/**
 * A key in the filter: its name and prefix, so keys of the same name read apart (the
 * prefix is what a person sees of a token); a revoked key says so.
 */
export function keyOptionLabel(key: ApiKey): string {
  return `${key.displayName} (${key.keyPrefix}…)${key.revokedAt ? ", revoked" : ""}`;
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
      ["refused", "Refused (never sent, not charged)"],
      ["cancelled", "Cancelled"],
    ],
    filters.status ?? "",
  )}</select></div>
<div><label for="filter-key">Key</label><select id="filter-key" name="api_key_id">${selectOptions(
    [["", "Any"] as const, ...view.keys.map((key) => [key.id, keyOptionLabel(key)] as const)],
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
  const keys: KeyNames = new Map(view.keys.map((key) => [key.id, key.displayName]));
  // Pages go by the last request shown (`after`), never by an offset: the thousandth page
  // costs what the first does, and requests arriving meanwhile do not shift what comes next.
  // Going back is the browser's Back, or the newest page; no script needed either way.
  const link = (extra: Record<string, string>) => requestsUrl("/console/requests", req.namespace.id, filters, { limit: String(page.limit), ...extra });
  const deeper = page.after !== undefined || page.offset > 0;
  const newest = deeper ? html`<a href="${link({})}" rel="first">Newest requests</a>` : "";
  const older = view.nextAfter !== null ? html`<a href="${link({ after: view.nextAfter })}" rel="next">Older requests</a>` : "";
  const filtered = FILTER_NAMES.some((name) => filters[name]);
  const body = html`${filterForm(req, view)}
<section aria-labelledby="requests-heading"><h2 id="requests-heading">Requests of ${req.namespace.name}</h2>
${
  records.length === 0
    ? html`<p>${deeper ? "No more requests." : filtered ? "No request matches these filters." : "No requests yet."}</p>`
    : html`<p class="hint">${deeper ? "Earlier requests" : "The latest requests"}${filtered ? " matching the filters" : ""}, newest first. Select a time for the request's details.
<a href="${requestsUrl("/console/requests.csv", req.namespace.id, filters)}" download>Download all ${filtered ? "matching " : ""}requests as CSV</a></p>
<div class="scroll"><table class="dense" id="requests-table">
<thead><tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">Model</th><th scope="col">Provider</th><th scope="col">Status</th><th scope="col" class="num">Tokens in</th><th scope="col" class="num">Tokens out</th><th scope="col" class="num">Cost</th><th scope="col" class="num">Latency</th><th scope="col" class="num">First token</th><th scope="col">Paid by</th></tr></thead>
<tbody>${records.map((record) => requestRow(req, record, keys, filters))}</tbody></table></div>`
}
${newest || older ? html`<nav aria-label="Pages"><ul><li>${newest}</li><li>${older}</li></ul></nav>` : ""}</section>`;
  return managementLayout(req, { path: "/console/requests", title: "Requests", state: {}, body });
}
