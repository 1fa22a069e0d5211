import type { Principal } from "../auth/principal";
import type { CatalogEndpoint } from "../providers/catalog";

/**
 * Whose money pays for a call: `cloud_credit` is the platform's keys, billed from the
 * account's wallet; `byok` is the account's own provider key, billed by the provider to
 * the customer. The same words as the request record's `funding_source` (the names the
 * history documents, docs/api/byok.md; stored by migration 0018), so nothing translates them.
 */
export type Funding = "cloud_credit" | "byok";

/** The credential that pays for calls to one endpoint. */
export interface UpstreamFunding {
  funding: Funding;
  apiKey: string;
  /** Where to call instead of the endpoint's own base URL (a BYOK key's `api_base`). */
  baseUrl?: string;
  /** For `byok`: the namespace the key belongs to, null for the account's (which row to mark used or refused). */
  byokNamespaceId?: string | null;
}

/**
 * Chooses the upstream credentials for an endpoint on behalf of a caller, best first; an
 * empty list when nothing can pay for it (the endpoint is skipped). Asynchronous, so a
 * source may look a credential up (a customer's sealed key) without holding the request's
 * thread.
 */
export interface FundingSource {
  fund(principal: Principal, endpoint: CatalogEndpoint): Promise<UpstreamFunding[]>;
}
