import type { Policy, PolicyBinding } from "../management/policies/policy-service";
import { html, type SafeHtml } from "./html";
import { formFields } from "./management-layout";
import type { ManagementRequest } from "./management-request";
import { PRINCIPAL_GROUPS, principalValue, type NamespacePrincipals, type PrincipalChoice } from "./namespace-principals";

function choiceOption(choice: PrincipalChoice): SafeHtml {
  return html`<option value="${principalValue(choice.principal)}">${choice.label}</option>`;
}

/** The bind form's list: the namespace first, then each kind of principal in its own group. */
function principalOptions(choices: readonly PrincipalChoice[]): SafeHtml {
  const namespace = choices.filter((choice) => choice.principal.type === "namespace");
  const groups = PRINCIPAL_GROUPS.map(({ type, label }) => {
    const members = choices.filter((choice) => choice.principal.type === type);
    return members.length === 0 ? "" : html`<optgroup label="${label}">${members.map(choiceOption)}</optgroup>`;
  });
  return html`${namespace.map(choiceOption)}${groups}`;
}

function bindingItem(req: ManagementRequest, policy: Policy, binding: PolicyBinding, principals: NamespacePrincipals): SafeHtml {
  const labelId = `binding-${binding.id}`;
  return html`<li><span id="${labelId}">${principals.labelOf(binding)}</span>
<form class="inline" method="post" action="/console/policies/unbind">${formFields(req, "policies-unbind")}<input type="hidden" name="id" value="${policy.id}"><input type="hidden" name="binding" value="${binding.id}"><button type="submit" class="secondary" aria-describedby="${labelId}">Unbind</button></form></li>`;
}

/**
 * What a policy is bound to (each with an Unbind button), and a form to bind it to one
 * more of the namespace's principals. Unbound, a policy applies to no request.
 */
export function policyBindings(req: ManagementRequest, policy: Policy, bindings: readonly PolicyBinding[], principals: NamespacePrincipals): SafeHtml {
  const bound = new Set(bindings.map((binding) => `${binding.principalType}:${binding.principalId}`));
  const free = principals.choices.filter((choice) => !bound.has(principalValue(choice.principal)));
  const selectId = `bind-${policy.id}`;
  return html`<h4>Applies to</h4>
${
  bindings.length === 0
    ? html`<p>Nothing yet: bound to nothing, it applies to no request.</p>`
    : html`<ul class="bindings">${bindings.map((binding) => bindingItem(req, policy, binding, principals))}</ul>`
}
${
  free.length === 0
    ? html`<p class="hint">Bound to every principal of this namespace.</p>`
    : html`<form method="post" action="/console/policies/bind">${formFields(req, "policies-bind")}<input type="hidden" name="id" value="${policy.id}">
<label for="${selectId}">Bind “${policy.name}” to</label>
<select id="${selectId}" name="principal">${principalOptions(free)}</select>
<button type="submit" class="secondary">Bind</button></form>`
}`;
}
