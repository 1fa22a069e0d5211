import type { Principal } from "../auth/principal";
import type { Catalog, CatalogEndpoint } from "../providers/catalog";
import type { FundingSource, UpstreamFunding } from "./funding-source";

/**
 * The platform's own provider keys, from each provider's `api_key_env` (docs/configuration.md): every caller is funded alike, and a provider without a key is not
 * eligible.
 */
export class PlatformKeys implements FundingSource {
  constructor(private readonly catalog: Pick<Catalog, "platformKeyFor">) {}

  async fund(_principal: Principal, endpoint: CatalogEndpoint): Promise<UpstreamFunding[]> {
    const apiKey = this.catalog.platformKeyFor(endpoint.provider);
    return apiKey ? [{ funding: "cloud_credit", apiKey }] : [];
  }
}
