import { consoleNav, namespacePicker } from "./console-nav";
import { renderPage } from "./console-page";
import { html, type SafeHtml } from "./html";
import type { ConsoleContext } from "./console-context";
import { managementPage, type ManagementRequest, type QueryFields } from "./management-request";

/** What a form shows again after a refusal: the message, its status and what was typed. */
export interface FormState {
  error?: string;
  status?: number;
  notice?: string;
  /** The fields as submitted, to fill the form again (never a secret). */
  values?: Record<string, string>;
}

export interface ManagementPageOptions {
  path: string;
  title: string;
  state: FormState;
  body: SafeHtml;
}

/** A management page: heading, navigation, namespace picker, the outcome of the last form, then the page's own body. */
export function managementLayout(req: ManagementRequest, options: ManagementPageOptions): Response {
  const { state } = options;
  const body = html`<h1>${options.title}</h1>
${consoleNav(options.path, req.namespace.id)}
${namespacePicker(options.path, req.namespaces, req.namespace.id)}
${state.notice ? html`<p class="notice" role="status" id="form-notice">${state.notice}</p>` : ""}
${state.error ? html`<p class="error" role="alert" id="form-error">${state.error}</p>` : ""}
${options.body}`;
  return renderPage({
    title: options.title,
    body,
    status: state.status,
    signedInAs: req.session.email,
    signOutToken: req.session.csrfToken("sign-out"),
    cookies: req.session.cookies,
  });
}

/** The hidden fields every management form carries: its CSRF token and the namespace it acts in. */
export function formFields(req: ManagementRequest, purpose: string): SafeHtml {
  return html`<input type="hidden" name="csrf_token" value="${req.session.csrfToken(purpose)}"><input type="hidden" name="ns" value="${req.namespace.id}">`;
}

/** A one-button form (revoke, delete, disable) posting `id` to `action`. */
export function buttonForm(req: ManagementRequest, action: string, purpose: string, id: string, label: string, options: { danger?: boolean; describedBy?: string } = {}): SafeHtml {
  return html`<form class="inline" method="post" action="${action}">${formFields(req, purpose)}<input type="hidden" name="id" value="${id}"><button type="submit" class="${options.danger ? "danger" : "secondary"}"${
    options.describedBy ? html` aria-describedby="${options.describedBy}"` : ""
  }>${label}</button></form>`;
}

/** The `<option>`s of a `<select>`, `[value, label]` each, with `selected` marked. */
export function selectOptions(options: readonly (readonly [string, string])[], selected: string): SafeHtml[] {
  return options.map(([value, label]) => html`<option value="${value}"${value === selected ? html` selected` : ""}>${label}</option>`);
}

/** The notice for `?done=` after a redirect: only fixed texts of the page, never the query's own words. */
export function noticeOf(query: QueryFields, notices: Record<string, string>): FormState {
  const done = query.done;
  return done !== undefined && Object.hasOwn(notices, done) ? { notice: notices[done] } : {};
}

/** A page's GET route: the page, with the notice its `?done=` names (one of the page's fixed `notices`). */
export function pageWithNotices(context: ConsoleContext, notices: Record<string, string>, show: (req: ManagementRequest, state: FormState) => Promise<Response>) {
  return ({ request, query }: { request: Request; query: QueryFields }) => managementPage(context, request, query, (req) => show(req, noticeOf(query, notices)));
}

/** The value to put back in a field after a refusal. */
export function valueOf(state: FormState, name: string, fallback = ""): string {
  return state.values?.[name] ?? fallback;
}
