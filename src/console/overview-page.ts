import type { Namespace } from "../management/namespaces/namespace-service";
import type { DailyUsage } from "../management/usage/usage-service";
import type { BalanceEnvelope } from "../management/billing/billing-service";
import type { NamespaceUsageEnvelope } from "../management/usage/usage-service";
import { renderPage } from "./console-page";
import { consoleNav, namespacePicker } from "./console-nav";
import type { ConsoleSession } from "./console-sessions";
import { firstRunPanel, type FirstRun } from "./first-run";
import { countOf, formatCount, formatUsd } from "./format";
import { html, type SafeHtml } from "./html";
import { daysBetween, groupSums, stackedSeries, type DailyMetric, type GroupSums } from "./overview-series";
import type { RequestBreakdown } from "./request-breakdown";
import { stackedBarChart } from "./svg-chart";

export const OVERVIEW_PERIODS = [1, 7, 30, 90] as const;
export type OverviewPeriod = (typeof OVERVIEW_PERIODS)[number];
export type OverviewSplit = "model" | "key";

export interface OverviewData {
  namespaces: readonly Namespace[];
  namespace: Namespace;
  balance: BalanceEnvelope;
  usage: NamespaceUsageEnvelope;
  period: OverviewPeriod;
  split: OverviewSplit;
  from: Date;
  to: Date;
  /** Daily figures by model and by API key (`group` is the key's id, null for OAuth grants and older records). */
  byModel: readonly DailyUsage[];
  byKey: readonly DailyUsage[];
  keyNames: ReadonlyMap<string, string>;
  breakdown: RequestBreakdown;
  /** Set when the namespace has never had a request: what to run to make the first one. */
  firstRun?: FirstRun;
}

function overviewUrl(data: OverviewData, change: { period?: OverviewPeriod; split?: OverviewSplit }): string {
  const query = new URLSearchParams({ ns: data.namespace.id, days: String(change.period ?? data.period), by: change.split ?? data.split });
  return `/console?${query}`;
}

function choices(data: OverviewData): SafeHtml {
  const link = (href: string, label: string, current: boolean) => html`<li><a href="${href}"${current ? html` aria-current="true"` : ""}>${label}</a></li>`;
  return html`<div class="choices">
<nav aria-label="Period"><span id="period-label">Period</span> <ul aria-labelledby="period-label">${OVERVIEW_PERIODS.map((period) =>
    link(overviewUrl(data, { period }), period === 1 ? "1 day" : `${period} days`, period === data.period),
  )}</ul></nav>
<nav aria-label="Split charts by"><span id="split-label">Split by</span> <ul aria-labelledby="split-label">${link(overviewUrl(data, { split: "key" }), "API key", data.split === "key")}${link(
    overviewUrl(data, { split: "model" }),
    "Model",
    data.split === "model",
  )}</ul></nav></div>`;
}

function keyLabel(data: OverviewData, group: string | null): string {
  if (group === null) return "OAuth or unattributed";
  return data.keyNames.get(group) ?? `key ${group}`;
}

function requestsLink(data: OverviewData, filters: Record<string, string>, label: string): SafeHtml {
  return html`<a href="${`/console/requests?${new URLSearchParams({ ns: data.namespace.id, ...filters })}`}">${label}</a>`;
}

function topTable(id: string, heading: string, rows: readonly GroupSums[], name: (row: GroupSums) => SafeHtml | string, extra?: { heading: string; cell: (row: GroupSums) => SafeHtml | string }): SafeHtml {
  return html`<section aria-labelledby="${id}-heading"><h2 id="${id}-heading">${heading}</h2>${
    rows.length === 0
      ? html`<p>Nothing in this period.</p>`
      : html`<div class="scroll"><table class="dense" id="${id}"><thead><tr><th scope="col">Name</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">Spend</th>${
          extra ? html`<th scope="col" class="num">${extra.heading}</th>` : ""
        }</tr></thead>
<tbody>${rows.slice(0, 10).map(
          (row) => html`<tr><td data-label="Name" class="wrap">${name(row)}</td><td data-label="Requests" class="num">${formatCount(row.requests)}</td><td data-label="Tokens" class="num">${formatCount(row.tokens)}</td><td data-label="Spend" class="num">${formatUsd(row.spendMicroUsd)}</td>${
            extra ? html`<td data-label="${extra.heading}" class="num">${extra.cell(row)}</td>` : ""
          }</tr>`,
        )}</tbody></table></div>`
  }</section>`;
}

function outcomes(data: OverviewData): SafeHtml {
  const { breakdown } = data;
  const sample = breakdown.complete ? "" : html`<p class="hint">Counted over the newest ${formatCount(breakdown.counted)} requests of the period.</p>`;
  return html`<section aria-labelledby="outcomes-heading"><h2 id="outcomes-heading">Refusals and errors</h2>${
    breakdown.kinds.length === 0
      ? html`<p>None in this period.</p>`
      : html`<table class="dense" id="failure-kinds"><thead><tr><th scope="col">Kind</th><th scope="col" class="num">Requests</th></tr></thead><tbody>${breakdown.kinds.map(
          (entry) => html`<tr><td data-label="Kind">${entry.kind}</td><td data-label="Requests" class="num">${formatCount(entry.count)}</td></tr>`,
        )}</tbody></table>
<p>${requestsLink(data, { status: "failed" }, "See the failed requests")}</p>`
  }
<h2 id="funding-heading">Who paid</h2>
<dl id="funding">
<dt>Wallet</dt><dd>${countOf(breakdown.wallet.requests, "request")}, ${formatUsd(breakdown.wallet.spendMicroUsd)}</dd>
<dt>Own provider keys (BYOK)</dt><dd id="byok-usage">${countOf(breakdown.byok.requests, "request")}, ${countOf(breakdown.byok.promptTokens + breakdown.byok.completionTokens, "token")}, not charged</dd>
</dl>${sample}</section>`;
}

function charts(data: OverviewData): SafeHtml {
  const days = daysBetween(data.from, data.to);
  const rows = data.split === "key" ? data.byKey : data.byModel;
  const label = data.split === "key" ? (group: string | null) => keyLabel(data, group) : (group: string | null) => group ?? "(no model)";
  const splitWords = data.split === "key" ? "API key" : "model";
  // Biggest spender first (then most requests): one order, so one colour per group, for every chart.
  const order = groupSums(rows).map((sum) => sum.group);
  const chart = (id: string, title: string, metric: DailyMetric, format: (value: number) => string) =>
    stackedBarChart({
      id,
      title,
      description: `${title} over the last ${data.period === 1 ? "day" : `${data.period} days`}, one bar per UTC day, stacked by ${splitWords}. The same figures follow as a table.`,
      days,
      series: stackedSeries(rows, days, metric, label, order),
      format,
    });
  return html`<div class="grid two">
${chart("spend-chart", "Spend per day", (row) => row.spend_micro_usd, formatUsd)}
${chart("requests-chart", "Requests per day", (row) => row.request_count, (value) => formatCount(Math.round(value)))}
</div>
<div class="grid two">
${chart("tokens-chart", "Tokens per day", (row) => row.prompt_tokens + row.completion_tokens, (value) => formatCount(Math.round(value)))}
${outcomes(data)}
</div>`;
}

/** The overview: the wallet, then the picked namespace's spend, requests and tokens per day, who spent it, and what failed. */
export function overviewPage(session: ConsoleSession, data: OverviewData): Response {
  const { balance, usage } = data;
  const body = html`<h1>Overview</h1>
${consoleNav("/console", data.namespace.id)}
${namespacePicker("/console", data.namespaces, data.namespace.id)}
<dl class="stats" aria-label="Wallet and totals">
<div><dt>Balance</dt><dd id="wallet-balance">${formatUsd(balance.balance_micro_usd)}</dd></div>
<div><dt>Available</dt><dd id="wallet-available">${formatUsd(balance.available_micro_usd)}</dd></div>
<div><dt>Reserved for requests in flight</dt><dd>${formatUsd(balance.pending_debits_micro_usd)}</dd></div>
<div><dt>Spend</dt><dd id="usage-spend">${formatUsd(usage.spend_micro_usd)}</dd></div>
<div><dt>Requests</dt><dd id="usage-requests">${formatCount(usage.request_count)}</dd></div>
<div><dt>Tokens in / out</dt><dd>${formatCount(usage.prompt_tokens)} / ${formatCount(usage.completion_tokens)}</dd></div>
${usage.billing_anomalies > 0 ? html`<div><dt>Requests with an unknown charge</dt><dd>${formatCount(usage.billing_anomalies)}</dd></div>` : ""}
</dl>
<h2 id="usage-heading">Usage of ${data.namespace.name}, last ${data.period === 1 ? "day" : `${data.period} days`}</h2>
${data.firstRun ? firstRunPanel(data.firstRun) : dashboard(data)}`;
  return renderPage({
    title: "Overview",
    body,
    signedInAs: session.email,
    signOutToken: session.csrfToken("sign-out"),
    cookies: session.cookies,
  });
}

/** The charts and tables of a namespace that has had requests (one that never had any gets the first-run panel instead). */
function dashboard(data: OverviewData): SafeHtml {
  const failedOf = (row: GroupSums) => {
    const failed = row.group === null ? 0 : (data.breakdown.failedByKey.get(row.group) ?? 0);
    return failed === 0 ? "0" : requestsLink(data, { api_key_id: row.group!, status: "failed" }, `${formatCount(failed)} failed`);
  };
  return html`${choices(data)}
${charts(data)}
<div class="grid two">
${topTable("top-keys", "Top API keys", groupSums(data.byKey), (row) => (row.group === null ? keyLabel(data, null) : requestsLink(data, { api_key_id: row.group }, keyLabel(data, row.group))), {
  heading: "Failed",
  cell: failedOf,
})}
${topTable("top-models", "Top models", groupSums(data.byModel), (row) => (row.group === null ? "(no model)" : requestsLink(data, { model_id: row.group }, row.group)))}
</div>`;
}
