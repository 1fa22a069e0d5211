import type { Principal } from "../auth/principal";
import type { CatalogEndpoint } from "../providers/catalog";
import type { ByokCredential } from "../byok/byok-key-store";
import type { FundingSource, UpstreamFunding } from "./funding-source";
import { log } from "../observability/log";

export interface AccountKeyLookup {
  credentialFor(accountId: string, namespaceId: string | null, providerId: string): Promise<ByokCredential | undefined>;
}

/**
 * The caller's own provider key (BYOK, docs/api/byok.md "BYOK": its namespace's, else the account's) first, for providers that accept
 * one, then whatever `platform` funds: the customer's contract is used before the
 * platform's money, and the platform's key stays a fallback when the customer's is
 * refused.
 */
export class AccountKeysThenPlatform implements FundingSource {
  constructor(
    private readonly keys: AccountKeyLookup,
    private readonly platform: FundingSource,
  ) {}

  async fund(principal: Principal, endpoint: CatalogEndpoint): Promise<UpstreamFunding[]> {
    const platform = await this.platform.fund(principal, endpoint);
    if (!endpoint.byok) return platform;
    let own: ByokCredential | undefined;
    try {
      own = await this.keys.credentialFor(principal.accountId, principal.namespaceId, endpoint.provider);
    } catch (error) {
      // A stored key that cannot be read (the database unreachable, a KEK gone) must not
      // stop the request: the platform's key still serves it. The message names no key.
      log.warn("BYOK key unavailable; using platform funding", { provider: endpoint.provider, error: error instanceof Error ? error.message : String(error) });
      return platform;
    }
    if (own === undefined) return platform;
    const byok: UpstreamFunding = { funding: "byok", apiKey: own.key, byokNamespaceId: own.namespaceId, ...(own.apiBase ? { baseUrl: own.apiBase } : {}) };
    return [byok, ...platform];
  }
}
