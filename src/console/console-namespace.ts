import type { NamespaceRow } from "../db/queries/namespaces";
import { ApiError } from "../errors/api-error";
import { accountNamespaces, type NamespaceServiceDeps } from "../management/namespaces/namespace-service";

export interface PickedNamespace {
  namespaces: NamespaceRow[];
  namespace: NamespaceRow;
}

/**
 * The namespace a console page shows: the one `?ns=` (or a form's `ns` field) names, else
 * the account's oldest live namespace. A namespace that is not one of the account's live
 * ones is the same 404 as a missing one.
 */
export async function pickNamespace(deps: NamespaceServiceDeps, accountId: string, requested: string | undefined): Promise<PickedNamespace> {
  const namespaces = await accountNamespaces(deps, accountId);
  const namespace = requested === undefined || requested === "" ? namespaces[0] : namespaces.find((row) => row.id === requested);
  if (!namespace) throw new ApiError("not_found", requested ? "There is no such namespace in this account." : "This account has no namespace.");
  return { namespaces, namespace };
}
