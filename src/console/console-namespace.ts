import { ApiError } from "../errors/api-error";
import { accountNamespaces, type Namespace, type NamespaceServiceDeps } from "../management/namespaces/namespace-service";

export interface PickedNamespace {
  namespaces: Namespace[];
  namespace: Namespace;
}

/**
 * The namespace a console page shows: the one `?ns=` (or a form's `ns` field) names, else
 * `me` (the account's oldest live namespace, as src/identity/me-namespace.ts answers it for
 * every caller). A namespace that is not one of the account's live ones is the same 404 as
 * a missing one.
 */
export async function pickNamespace(deps: NamespaceServiceDeps, accountId: string, requested: string | undefined): Promise<PickedNamespace> {
  const named = requested === undefined || requested === "" ? undefined : requested;
  const [namespaces, wanted] = await Promise.all([
    accountNamespaces(deps, accountId),
    named ?? deps.me.namespaceFor({ accountId, namespaceId: null }, "fresh"),
  ]);
  const namespace = namespaces.find((row) => row.id === wanted);
  if (!namespace) throw new ApiError("not_found", requested ? "There is no such namespace in this account." : "This account has no namespace.");
  return { namespaces, namespace };
}
