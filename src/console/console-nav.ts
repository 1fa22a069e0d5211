import type { Namespace } from "../management/namespaces/namespace-service";
import { html, type SafeHtml } from "./html";

/** The console's pages, in navigation order; a page joins the navigation here. */
export const CONSOLE_PAGES: readonly { path: string; label: string }[] = [
  { path: "/console", label: "Overview" },
  { path: "/console/requests", label: "Requests" },
  { path: "/console/models", label: "Models" },
  { path: "/console/keys", label: "API keys" },
  { path: "/console/byok", label: "Provider keys" },
  { path: "/console/policies", label: "Policies" },
  { path: "/console/routing-presets", label: "Routing presets" },
  { path: "/console/oauth", label: "OAuth" },
  { path: "/console/account", label: "Account" },
];

/** The navigation, each link keeping the namespace picked; the current page is marked for assistive technology. */
export function consoleNav(currentPath: string, namespaceId: string | undefined): SafeHtml {
  const query = namespaceId === undefined ? "" : `?ns=${encodeURIComponent(namespaceId)}`;
  return html`<nav aria-label="Console"><ul>${CONSOLE_PAGES.map(
    (page) => html`<li><a href="${page.path + query}"${page.path === currentPath ? html` aria-current="page"` : ""}>${page.label}</a></li>`,
  )}</ul></nav>`;
}

/** The namespace picker: a plain GET form, so it works without script. */
export function namespacePicker(action: string, namespaces: readonly Namespace[], selectedId: string): SafeHtml {
  return html`<form class="card picker" method="get" action="${action}">
<label for="ns">Namespace</label>
<select id="ns" name="ns">${namespaces.map(
    (namespace) => html`<option value="${namespace.id}"${namespace.id === selectedId ? html` selected` : ""}>${namespace.name}</option>`,
  )}</select>
<button type="submit" class="secondary">Show</button>
</form>`;
}
