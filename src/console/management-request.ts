import type { Caller } from "../auth/principal";
import type { Namespace } from "../management/namespaces/namespace-service";
import type { Tenant } from "../identity/tenant";
import { ApiError } from "../errors/api-error";
import { asPage, field, forgedFormPage, signInFirst, type ConsoleContext } from "./console-context";
import { pickNamespace } from "./console-namespace";
import { redirect } from "./console-page";
import type { ConsoleSession } from "./console-sessions";
import { sessionCaller } from "./session-caller";

/** What a management page or form handler works with once the request is let in. */
export interface ManagementRequest {
  session: ConsoleSession;
  caller: Caller;
  namespaces: Namespace[];
  namespace: Namespace;
  /** The account and the picked namespace, as the services take them. */
  tenant: Tenant;
}

export type QueryFields = Record<string, string | undefined>;

/** A page view: signed in (else to sign-in and back), the namespace `?ns=` picks. */
export function managementPage(context: ConsoleContext, request: Request, query: QueryFields, show: (req: ManagementRequest) => Promise<Response>): Promise<Response> {
  return asPage(async () => {
    const session = await context.sessions.resolve(request);
    if (!session) return signInFirst(request);
    return show(await managementRequest(context, session, query.ns));
  });
}

/**
 * A form submission: signed in, from this site (no foreign Origin) and carrying the
 * session's CSRF token for this form's `purpose`; then the namespace of its `ns` field.
 * The checks come before anything is read or written.
 */
export function managementForm(
  context: ConsoleContext,
  request: Request,
  body: unknown,
  purpose: string,
  handle: (req: ManagementRequest) => Promise<Response>,
): Promise<Response> {
  return asPage(async () => {
    const session = await context.sessions.resolve(request);
    // After signing in, back to the form's page (a GET of the form's own address is no page).
    if (!session) return redirect(`/console?next=${encodeURIComponent(pageOfForm(request))}`);
    if (context.foreignOrigin(request) || !session.checkCsrf(purpose, field(body, "csrf_token"))) return forgedFormPage(session);
    return handle(await managementRequest(context, session, field(body, "ns")));
  });
}

async function managementRequest(context: ConsoleContext, session: ConsoleSession, requested: string | undefined): Promise<ManagementRequest> {
  const picked = await pickNamespace(context.services, session.accountId, requested);
  return { session, caller: sessionCaller(session), ...picked, tenant: { accountId: session.accountId, namespaceId: picked.namespace.id } };
}

/** The page a management form is on: `/console/keys/revoke` is on `/console/keys`. */
function pageOfForm(request: Request): string {
  return new URL(request.url).pathname.split("/").slice(0, 3).join("/");
}

/** What a form that shows its refusals does: its action, and how it shows its page again. */
interface RefusableAction {
  act(req: ManagementRequest): Promise<Response>;
  showAgain(req: ManagementRequest, message: string, status: number): Promise<Response>;
}

/**
 * A form submission (managementForm) whose refusals are shown rather than failed: when
 * the service refuses the input (a 400, or a 409 such as a name already taken) the form
 * is shown again with the refusal's message in that status. Anything else (a 404 for an
 * id that is not the account's) becomes its error page.
 */
export function refusableForm(context: ConsoleContext, request: Request, body: unknown, purpose: string, action: RefusableAction): Promise<Response> {
  return managementForm(context, request, body, purpose, (req) =>
    orShowRefusal(
      () => action.act(req),
      (message, status) => action.showAgain(req, message, status),
    ),
  );
}

async function orShowRefusal(action: () => Promise<Response>, showAgain: (message: string, status: number) => Promise<Response>): Promise<Response> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof ApiError && (error.kind === "invalid_request" || error.kind === "conflict")) return showAgain(error.message, error.status);
    throw error;
  }
}

/** Back to a page after a change (303, so a reload does not post again), keeping the namespace. */
export function backTo(req: ManagementRequest, path: string, done?: string): Response {
  const query = new URLSearchParams({ ns: req.namespace.id });
  if (done !== undefined) query.set("done", done);
  return redirect(`${path}?${query}`, req.session.cookies);
}
