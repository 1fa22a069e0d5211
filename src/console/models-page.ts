import type { ModelBody, ProviderBody } from "../public/discovery-routes";
import { formatCount } from "./format";
import { html } from "./html";
import { managementLayout } from "./management-layout";
import type { ManagementRequest } from "./management-request";

/** USD per million tokens; "—" where the catalog states no rate (unknown, not free). */
function perMillion(rate: number | undefined): string {
  return rate === undefined ? "—" : `$${rate.toFixed(rate < 1 ? 3 : 2).replace(/(\.\d\d)0$/, "$1")}`;
}

function percent(ratio: number): string {
  return `${(Math.round(ratio * 1000) / 10).toFixed(1)}%`;
}

function milliseconds(value: number | null | undefined): string {
  return value === null || value === undefined || value === 0 ? "—" : `${formatCount(value)} ms`;
}

function modelRow(model: ModelBody) {
  const metrics = model.metrics;
  return html`<tr>
<td data-label="Model" class="wrap"><strong>${model.id}</strong><br><span class="hint">${model.name}</span></td>
<td data-label="Input /1M" class="num">${perMillion(model.pricing.input_tokens.no_cache)}</td>
<td data-label="Output /1M" class="num">${perMillion(model.pricing.output_tokens.text)}</td>
<td data-label="Cache read /1M" class="num">${perMillion(model.pricing.input_tokens.cache_read)}</td>
<td data-label="Context" class="num">${model.max_input_tokens === undefined ? "—" : formatCount(model.max_input_tokens)}</td>
<td data-label="Capabilities" class="wrap">${[...model.input_modalities.map((modality) => `${modality} in`), ...model.capabilities].join(", ") || "—"}</td>
<td data-label="Providers" class="num">${model.providers.total_online}</td>
<td data-label="Success" class="num">${metrics ? percent(metrics.success_rate) : "—"}</td>
<td data-label="p50 latency" class="num">${milliseconds(metrics?.p50_latency_ms)}</td>
<td data-label="p50 first token" class="num">${milliseconds(metrics?.p50_ttft_ms)}</td>
</tr>`;
}

function providerRow(provider: ProviderBody) {
  const { aggregate } = provider;
  const seen = aggregate.request_count > 0;
  return html`<tr>
<td data-label="Provider"><strong>${provider.name}</strong><br><span class="hint">${provider.id}</span></td>
<td data-label="Own key (BYOK)">${provider.byok ? "accepted" : "no"}</td>
<td data-label="Attempts" class="num">${formatCount(aggregate.request_count)}</td>
<td data-label="Error rate" class="num">${seen ? percent(1 - aggregate.success_rate) : "—"}</td>
<td data-label="p50 latency" class="num">${milliseconds(seen ? aggregate.p50_latency_ms : null)}</td>
<td data-label="Requests last minute" class="num">${formatCount(provider.rate_limit.current_rpm)}</td>
</tr>`;
}

/**
 * The catalog as `GET /v1/models` and `GET /v1/providers` serve it: each model's prices,
 * context and capabilities, and each provider's live error rate and latency over the
 * telemetry window (the figures routing ranks by).
 */
export function modelsPage(req: ManagementRequest, models: readonly ModelBody[], providers: readonly ProviderBody[]): Response {
  const windowMinutes = Math.round((providers[0]?.metrics_window_seconds ?? 3600) / 60);
  // One table under the other, each the page's full width: side by side, the models table's
  // ten columns did not fit its share at 1440 px and the latency columns scrolled out of sight.
  const body = html`<section aria-labelledby="models-heading"><h2 id="models-heading">Models (${formatCount(models.length)})</h2>
<p class="hint">Prices in US dollars per million tokens, from the cheapest provider. Name a model as <code>provider/model</code>.</p>
<div class="scroll"><table class="dense" id="models-table">
<thead><tr><th scope="col">Model</th><th scope="col" class="num">Input /1M</th><th scope="col" class="num">Output /1M</th><th scope="col" class="num">Cache read /1M</th><th scope="col" class="num">Context</th><th scope="col">Capabilities</th><th scope="col" class="num">Providers</th><th scope="col" class="num">Success</th><th scope="col" class="num">p50 latency</th><th scope="col" class="num">p50 first token</th></tr></thead>
<tbody>${models.map(modelRow)}</tbody></table></div></section>
<section aria-labelledby="providers-heading"><h2 id="providers-heading">Providers, last ${windowMinutes} minutes</h2>
<p class="hint">Upstream attempts of every outcome, as this server routed them; the same figures as <code>GET /v1/providers</code>.</p>
<div class="scroll"><table class="dense" id="providers-table">
<thead><tr><th scope="col">Provider</th><th scope="col">Own key (BYOK)</th><th scope="col" class="num">Attempts</th><th scope="col" class="num">Error rate</th><th scope="col" class="num">p50 latency</th><th scope="col" class="num">Requests last minute</th></tr></thead>
<tbody>${providers.map(providerRow)}</tbody></table></div></section>`;
  return managementLayout(req, { path: "/console/models", title: "Models", state: {}, body });
}
