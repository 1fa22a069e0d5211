import type { routingPresetEnvelope } from "../management/routing-presets/routing-preset-service";
import { html } from "./html";
import { buttonForm, formFields, managementLayout, valueOf, type FormState } from "./management-layout";
import type { ManagementRequest } from "./management-request";

export type RoutingPresetView = ReturnType<typeof routingPresetEnvelope>;

/** A long system prompt is shown by its start; the whole is in the API. */
const PROMPT_PREVIEW_CHARS = 200;

function preview(text: string): string {
  const chars = [...text];
  return chars.length <= PROMPT_PREVIEW_CHARS ? text : `${chars.slice(0, PROMPT_PREVIEW_CHARS).join("")}…`;
}

function presetItem(req: ManagementRequest, preset: RoutingPresetView) {
  const disabled = preset.disabled_at !== null;
  const headingId = `preset-${preset.id}`;
  const routing = preset.routing as { only?: string[]; ignore?: string[]; sort?: string };
  return html`<li><h3 id="${headingId}"><code>@${preset.name}</code></h3>
<dl><dt>State</dt><dd>${disabled ? "Disabled" : "Enabled"}</dd>
<dt>Model</dt><dd>${preset.model ?? "(the request's own)"}</dd>
<dt>System prompt</dt><dd>${preset.system_prompt === null ? "(none)" : preview(preset.system_prompt)}</dd>
${routing.only ? html`<dt>Only providers</dt><dd>${routing.only.join(", ")}</dd>` : ""}
${routing.ignore ? html`<dt>Never providers</dt><dd>${routing.ignore.join(", ")}</dd>` : ""}
${routing.sort ? html`<dt>Prefer</dt><dd>${routing.sort}</dd>` : ""}</dl>
${
  disabled
    ? buttonForm(req, "/console/routing-presets/enable", "routing-presets-enable", preset.id, "Enable", { describedBy: headingId })
    : buttonForm(req, "/console/routing-presets/disable", "routing-presets-disable", preset.id, "Disable", { describedBy: headingId })
}
${buttonForm(req, "/console/routing-presets/delete", "routing-presets-delete", preset.id, "Delete", { danger: true, describedBy: headingId })}</li>`;
}

/** The namespace's routing presets ("virtual models" a request names as `@name`) and the form to create one. */
export function routingPresetsPage(req: ManagementRequest, presets: readonly RoutingPresetView[], state: FormState): Response {
  const body = html`<form class="card" method="post" action="/console/routing-presets">
<h2>Create a routing preset</h2>
${formFields(req, "routing-presets-create")}
<label for="preset-name">Name</label>
<input id="preset-name" name="name" type="text" maxlength="64" required pattern="[A-Za-z0-9][A-Za-z0-9_-]*" aria-describedby="preset-name-hint" value="${valueOf(state, "name")}">
<p class="hint" id="preset-name-hint">Letters, digits, “_” and “-”, starting with a letter or digit. Requests name it as <code>@name</code>.</p>
<label for="preset-model">Model</label>
<input id="preset-model" name="model" type="text" maxlength="256" aria-describedby="preset-model-hint" value="${valueOf(state, "model")}">
<p class="hint" id="preset-model-hint">A model id such as openai/gpt-4o-mini; empty keeps the model each request names.</p>
<label for="preset-system-prompt">System prompt (optional)</label>
<textarea id="preset-system-prompt" name="system_prompt" rows="4">${valueOf(state, "system_prompt")}</textarea>
<button type="submit">Create preset</button>
</form>
<section aria-labelledby="presets-heading"><h2 id="presets-heading">Routing presets of ${req.namespace.name}</h2>
${presets.length === 0 ? html`<p>No routing presets yet.</p>` : html`<ul class="items">${presets.map((preset) => presetItem(req, preset))}</ul>`}</section>`;
  return managementLayout(req, { path: "/console/routing-presets", title: "Routing presets", state, body });
}
