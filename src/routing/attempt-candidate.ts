import type { Funding } from "../funding/funding-source";
import type { ModelTokenLimits } from "../providers/catalog";
import type { CatalogPricing } from "../providers/pricing";
import type { RoutingProfile } from "./parse-model-ref";
import type { UpstreamTarget } from "./upstream-request";

/** One upstream attempt the pipeline may make, in order, with the credential that funds it. */
export interface AttemptCandidate extends UpstreamTarget {
  /** Canonical model id this attempt serves (a fallback may differ from the first). */
  modelId: string;
  providerId: string;
  /** Telemetry key `${provider}/${providerModelId}`. */
  statsKey: string;
  pricing: CatalogPricing;
  /** The served model's token limits from the catalog: admission's ceilings (src/admission/cost-ceiling.ts). */
  limits: ModelTokenLimits;
  /** `cloud_credit`: the platform's key, charged to the wallet; `byok`: the account's own key, not charged. */
  funding: Funding;
  /** For `byok`: the namespace the key belongs to, null for the account's. */
  byokNamespaceId?: string | null;
  routingProfile: RoutingProfile;
}
