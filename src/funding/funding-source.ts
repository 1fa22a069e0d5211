import type { Principal } from "../auth/principal";
import type { CatalogEndpoint } from "../providers/catalog";

/** The credential that pays for calls to one endpoint. */
export interface UpstreamFunding {
  /** Whose money: the platform's keys, billed from the account's wallet (the customer's own keys come with BYOK). */
  funding: "platform";
  apiKey: string;
}

/**
 * Chooses the upstream credential for an endpoint on behalf of a caller, or undefined when
 * nothing can pay for it (the endpoint is skipped). Asynchronous, so a source may look a
 * credential up (a customer's sealed key) without holding the request's thread.
 */
export interface FundingSource {
  fund(principal: Principal, endpoint: CatalogEndpoint): Promise<UpstreamFunding | undefined>;
}
