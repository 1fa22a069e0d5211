import type { ApiKey } from "../identity/api-key-service";
import type { UsageCounts } from "../db/usage-evidence-shape";
import type { RequestDetailEnvelope } from "../management/usage/usage-service";
import { formatCount, formatSecond } from "./format";
import { html } from "./html";
import { managementLayout } from "./management-layout";
import type { ManagementRequest } from "./management-request";
import { chargeText, credentialText, durationText, paidByText, statusText } from "./request-columns";

const COUNTERS: readonly (readonly [keyof UsageCounts, string])[] = [
  ["prompt_tokens", "Prompt tokens"],
  ["completion_tokens", "Completion tokens"],
  ["reasoning_tokens", "Reasoning tokens"],
  ["cache_read_tokens", "Cache reads"],
  ["cache_write_tokens", "Cache writes"],
  ["web_search_count", "Web searches"],
];

function countersList(usage: UsageCounts) {
  return html`<dl>${COUNTERS.map(([name, label]) => html`<dt>${label}</dt><dd>${formatCount(usage[name] ?? 0)}</dd>`)}</dl>`;
}

const OUTCOMES: Record<string, string> = { success: "answered", provider_error: "provider error", timeout: "timed out", client_error: "refused the request", aborted: "aborted" };

/**
 * Each attempt as the record keeps it (provider, funding, outcome, the upstream's status,
 * the gateway's error kind, timings) with the usage its provider reported. Records older
 * than attempts were kept show the usage frames alone.
 */
function attempts(detail: RequestDetailEnvelope) {
  const frames = detail.usage_evidence.raw_usage_frames ?? [];
  const usageOf = (ordinal: number) => frames.filter((frame) => frame.attempt_ordinal === ordinal);
  const tokens = (ordinal: number) => {
    const reported = usageOf(ordinal);
    if (reported.length === 0) return "—";
    const sum = (pick: (usage: UsageCounts) => number) => reported.reduce((total, frame) => total + pick(frame.usage), 0);
    return `${formatCount(sum((usage) => usage.prompt_tokens))} / ${formatCount(sum((usage) => usage.completion_tokens))}`;
  };
  if (detail.attempts === null || detail.attempts.length === 0) {
    if (frames.length === 0) return html`<p>No attempt${detail.provider_id ? " was recorded" : ": the request never reached a provider"}.</p>`;
    return html`<ul>${frames.map((frame) => html`<li>Attempt ${frame.attempt_ordinal}: ${frame.provider_id}, ${formatCount(frame.usage.prompt_tokens)} / ${formatCount(frame.usage.completion_tokens)} tokens</li>`)}</ul>`;
  }
  return html`<div class="scroll"><table class="dense" id="attempts-table"><thead><tr><th scope="col">Attempt</th><th scope="col">Provider</th><th scope="col">Paid by</th><th scope="col">Outcome</th><th scope="col" class="num">Upstream status</th><th scope="col" class="num">Duration</th><th scope="col" class="num">First token</th><th scope="col" class="num">Tokens in / out</th></tr></thead>
<tbody>${detail.attempts.map(
    (attempt) => html`<tr${attempt.outcome === "success" ? "" : html` class="failed"`}><td data-label="Attempt">${attempt.ordinal}</td><td data-label="Provider" class="wrap">${attempt.provider_id} <span class="hint">${attempt.model_id}</span></td>
<td data-label="Paid by">${attempt.funding_source === "byok" ? "Own key (BYOK)" : "Wallet"}</td><td data-label="Outcome">${OUTCOMES[attempt.outcome] ?? attempt.outcome}${attempt.error ? html` <span class="hint">(${attempt.error})</span>` : ""}</td>
<td data-label="Upstream status" class="num">${attempt.status_code ?? "—"}</td><td data-label="Duration" class="num">${durationText(attempt.duration_ms)}</td>
<td data-label="First token" class="num">${durationText(attempt.ttft_ms)}</td><td data-label="Tokens in / out" class="num">${tokens(attempt.ordinal)}</td></tr>`,
  )}</tbody></table></div>`;
}

/** One request: what it asked for, how it ended, who paid, the usage evidence, the attempts, the warnings and the policy that refused it. */
export function requestDetailPage(req: ManagementRequest, detail: RequestDetailEnvelope, keys: readonly ApiKey[], back: string): Response {
  const keyNames = new Map(keys.map((key) => [key.id, key.displayName]));
  const evidence = detail.usage_evidence;
  const warnings = detail.warnings.filter((warning) => warning.code !== "refused_by_policy" && warning.code !== "routing_preset");
  const body = html`<p><a href="${back}">Back to the requests</a></p>
${
  detail.refused_by
    ? html`<section class="error" aria-labelledby="refusal-heading" id="refusal"><h2 id="refusal-heading">Refused by a policy</h2>
<p>${detail.refused_by.reason}</p>
<p>Policy <a href="/console/policies?ns=${encodeURIComponent(req.namespace.id)}#policy-${detail.refused_by.policy_id}"><code>${detail.refused_by.policy_id}</code></a></p></section>`
    : ""
}
<div class="grid two">
<section aria-labelledby="summary-heading"><h2 id="summary-heading">Request <code>${detail.request_id}</code></h2>
<dl id="request-summary">
<dt>Time</dt><dd>${formatSecond(new Date(detail.created_at))}</dd>
<dt>Key</dt><dd>${credentialText(detail, keyNames)}</dd>
<dt>Model</dt><dd>${detail.model_id ?? "—"}${detail.routing_preset ? ` via @${detail.routing_preset}` : ""}</dd>
<dt>Provider</dt><dd>${detail.provider_id ?? "—"}</dd>
<dt>Routing profile</dt><dd>${detail.routing_profile ?? "—"}</dd>
<dt>Status</dt><dd id="request-status">${statusText(detail)}</dd>
<dt>Finish reason</dt><dd>${detail.finish_reason ?? "—"}</dd>
<dt>Streamed</dt><dd>${detail.streamed ? "yes" : "no"}</dd>
<dt>Tokens in / out</dt><dd>${formatCount(detail.prompt_tokens)} / ${formatCount(detail.completion_tokens)}</dd>
<dt>Cost</dt><dd>${chargeText(detail)} <span class="hint">(${detail.billing_status})</span></dd>
<dt>Paid by</dt><dd>${paidByText(detail)}</dd>
<dt>Latency</dt><dd>${durationText(detail.request_duration_ms)}</dd>
<dt>Upstream</dt><dd>${durationText(detail.upstream_duration_ms)}</dd>
<dt>Time to first token</dt><dd>${durationText(detail.ttft_ms)}${detail.first_token_kind ? ` (${detail.first_token_kind})` : ""}</dd>
<dt>Generation</dt><dd>${durationText(detail.generation_duration_ms)}</dd>
<dt>Capabilities used</dt><dd>${detail.used_capabilities.join(", ") || "—"}</dd>
</dl></section>
<section aria-labelledby="evidence-heading"><h2 id="evidence-heading">Usage evidence</h2>
<p>Source: <strong>${evidence.source}</strong>${evidence.source === "estimated" ? html` (estimated at ${evidence.estimator.chars_per_token} characters per token, estimator ${evidence.estimator.version})` : ""}</p>
<h3>Counted</h3>${countersList(evidence.effective_usage)}
<h3>As the provider reported it</h3>${countersList(evidence.raw_usage)}
</section>
</div>
<section aria-labelledby="attempts-heading"><h2 id="attempts-heading">Attempts</h2>${attempts(detail)}</section>
<section aria-labelledby="warnings-heading"><h2 id="warnings-heading">Warnings</h2>${
    warnings.length === 0
      ? html`<p>None.</p>`
      : html`<ul id="request-warnings">${warnings.map((warning) => html`<li><code>${warning.code}</code>${warning.field ? html` (${warning.field})` : ""}: ${warning.message}</li>`)}</ul>`
  }</section>`;
  return managementLayout(req, { path: "/console/requests", title: "Request", state: {}, body });
}
