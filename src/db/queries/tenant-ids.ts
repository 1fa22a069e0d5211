/** The account and namespace a tenant's row belongs to: every statement on such rows filters on both. */
export interface TenantIds {
  accountId: string;
  namespaceId: string;
}
