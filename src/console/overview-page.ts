import type { NamespaceRow } from "../db/queries/namespaces";
import type { BalanceEnvelope } from "../management/billing/billing-service";
import type { NamespaceUsageEnvelope } from "../management/usage/usage-service";
import { renderPage } from "./console-page";
import { consoleNav, namespacePicker } from "./console-nav";
import type { ConsoleSession } from "./console-sessions";
import { formatCount, formatUsd } from "./format";
import { html } from "./html";

export interface OverviewData {
  namespaces: readonly NamespaceRow[];
  namespace: NamespaceRow;
  balance: BalanceEnvelope;
  usage: NamespaceUsageEnvelope;
}

/** The overview: the wallet and the picked namespace's last 30 days. */
export function overviewPage(session: ConsoleSession, data: OverviewData): Response {
  const { balance, usage } = data;
  const body = html`<h1>Overview</h1>
${consoleNav("/console", data.namespace.id)}
${namespacePicker("/console", data.namespaces, data.namespace.id)}
<section aria-labelledby="wallet-heading"><h2 id="wallet-heading">Wallet</h2>
<dl>
<dt>Balance</dt><dd id="wallet-balance">${formatUsd(balance.balance_micro_usd)}</dd>
<dt>Reserved for requests in flight</dt><dd>${formatUsd(balance.pending_debits_micro_usd)}</dd>
<dt>Available</dt><dd>${formatUsd(balance.available_micro_usd)}</dd>
</dl></section>
<section aria-labelledby="usage-heading"><h2 id="usage-heading">Usage of ${data.namespace.name}, last 30 days</h2>
<dl>
<dt>Requests</dt><dd id="usage-requests">${formatCount(usage.request_count)}</dd>
<dt>Prompt tokens</dt><dd>${formatCount(usage.prompt_tokens)}</dd>
<dt>Completion tokens</dt><dd>${formatCount(usage.completion_tokens)}</dd>
<dt>Spend</dt><dd id="usage-spend">${formatUsd(usage.spend_micro_usd)}</dd>
${usage.billing_anomalies > 0 ? html`<dt>Requests with an unknown charge</dt><dd>${formatCount(usage.billing_anomalies)}</dd>` : ""}
</dl></section>`;
  return renderPage({
    title: "Overview",
    body,
    signedInAs: session.email,
    signOutToken: session.csrfToken("sign-out"),
    cookies: session.cookies,
  });
}
