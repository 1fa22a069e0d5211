import { listAccountKeys, listKeys, type ApiKey, type KeyServiceDeps } from "../identity/api-key-service";
import type { Tenant } from "../identity/tenant";

/**
 * Every key a request of the namespace can have been made with: the namespace's own and
 * the account-wide ones (the operator's account key among them), for naming the Key column,
 * the key filter and the charts. The console acts as the account, so it may read both.
 */
export async function requestKeys(deps: KeyServiceDeps, tenant: Tenant): Promise<ApiKey[]> {
  const [own, accountWide] = await Promise.all([listKeys(deps, tenant), listAccountKeys(deps, { accountId: tenant.accountId, namespaceId: null })]);
  return [...own, ...accountWide];
}
