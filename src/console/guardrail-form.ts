import { html, type SafeHtml } from "./html";
import { formFields, selectOptions, valueOf, type FormState } from "./management-layout";
import type { ManagementRequest } from "./management-request";

/**
 * Content-pattern rows the form offers. A fixed number of fieldsets (no script to add
 * rows); empty rows are ignored, so one pattern or none is as easy as three. More
 * patterns per guardrail go through the API.
 */
export const PATTERN_ROWS = 3;

/** The BYOK rule's choices: the empty value stores no rule. */
const BYOK_CHOICES: readonly (readonly [string, string])[] = [
  ["", "No rule"],
  ["required", "Required: own keys only"],
  ["forbidden", "Forbidden: never own keys"],
];

function patternRow(state: FormState, row: number): SafeHtml {
  const id = `pattern-${row}`;
  return html`<fieldset><legend>Content pattern ${row}</legend>
<label for="${id}-name">Pattern name</label>
<input id="${id}-name" name="${id}-name" type="text" maxlength="100" value="${valueOf(state, `${id}-name`)}">
<label for="${id}-regex">Regular expression</label>
<input id="${id}-regex" name="${id}-regex" type="text" maxlength="512" spellcheck="false" autocapitalize="off" aria-describedby="pattern-hint" value="${valueOf(state, `${id}-regex`)}">
<label for="${id}-action">When it matches</label>
<select id="${id}-action" name="${id}-action">${selectOptions(
    [
      ["block", "Block the request"],
      ["redact", "Redact the match"],
    ],
    valueOf(state, `${id}-action`, "block"),
  )}</select></fieldset>`;
}

/**
 * The form for a guardrail: model allow and deny lists, streaming, a token cap per
 * request, the BYOK rule and up to PATTERN_ROWS content patterns. `state` fills it again
 * after a refusal; a fresh form allows streaming.
 */
export function guardrailForm(req: ManagementRequest, state: FormState): SafeHtml {
  const submitted = state.values !== undefined;
  const streaming = submitted ? valueOf(state, "allow_streaming") !== "" : true;
  const rows = Array.from({ length: PATTERN_ROWS }, (_, index) => patternRow(state, index + 1));
  return html`<form class="card" method="post" action="/console/policies/guardrail">
<h2>Create a guardrail</h2>
${formFields(req, "policies-guardrail")}
<label for="guard-name">Name</label>
<input id="guard-name" name="name" type="text" maxlength="200" required value="${valueOf(state, "name")}">
<label for="guard-allow">Allowed models, one per line</label>
<textarea id="guard-allow" name="model_allow" rows="3" spellcheck="false" aria-describedby="guard-allow-hint">${valueOf(state, "model_allow")}</textarea>
<p class="hint" id="guard-allow-hint">For example openai/gpt-4.1-mini. Leave empty to allow every model.</p>
<label for="guard-deny">Denied models, one per line</label>
<textarea id="guard-deny" name="model_deny" rows="3" spellcheck="false" aria-describedby="guard-deny-hint">${valueOf(state, "model_deny")}</textarea>
<p class="hint" id="guard-deny-hint">A denied model is refused even when the allow list names it.</p>
<label class="check" for="guard-streaming"><input type="checkbox" id="guard-streaming" name="allow_streaming" value="on"${streaming ? html` checked` : ""}> Allow streaming</label>
<label for="guard-max-tokens">Most tokens per request</label>
<input id="guard-max-tokens" name="max_request_tokens" type="text" inputmode="numeric" aria-describedby="guard-max-tokens-hint" value="${valueOf(state, "max_request_tokens")}">
<p class="hint" id="guard-max-tokens-hint">Leave empty for no cap.</p>
<label for="guard-byok">Own provider keys (BYOK)</label>
<select id="guard-byok" name="byok" aria-describedby="guard-byok-hint">${selectOptions(BYOK_CHOICES, valueOf(state, "byok"))}</select>
<p class="hint" id="guard-byok-hint">Own keys are the provider keys saved on the BYOK page. Required: a request is served only with one of them. Forbidden: never with one of them.</p>
${rows}
<p class="hint" id="pattern-hint">A pattern is a JavaScript regular expression (a leading (?i) ignores case). Patterns that could take exponential time, such as (a+)+, are refused. Leave a row empty to skip it.</p>
<button type="submit">Create guardrail</button>
</form>`;
}
