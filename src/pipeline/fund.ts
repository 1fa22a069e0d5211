import { irError, type IrError } from "../ir";
import type { Principal } from "../auth/principal";
import type { FundingSource } from "../funding/funding-source";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import type { RankedEndpoint } from "../routing/plan-attempts";

/** Never more attempts than this for one request, whatever the fallback list. */
const MAX_ATTEMPTS = 16;

export type Funded = { ok: true; candidates: AttemptCandidate[] } | { ok: false; error: IrError };

/**
 * Stage 4: a credential for each ranked endpoint, in order; endpoints nothing can pay for
 * are skipped. Once MAX_ATTEMPTS candidates are in, each further model in `models` adds at
 * most its best funded endpoint. No candidate at all is a 402 naming the providers without
 * a credential.
 */
export async function fund(source: FundingSource, principal: Principal, byModel: readonly RankedEndpoint[][]): Promise<Funded> {
  const candidates: AttemptCandidate[] = [];
  const unfunded = new Set<string>();
  for (const ranked of byModel) {
    for (const { endpoint, profile, limits } of ranked) {
      const funded = await source.fund(principal, endpoint);
      if (funded === undefined) {
        unfunded.add(endpoint.provider);
        continue;
      }
      candidates.push({
        protocol: endpoint.protocol,
        baseUrl: endpoint.baseUrl,
        providerModelId: endpoint.providerModelId,
        apiKey: funded.apiKey,
        modelId: endpoint.modelId,
        providerId: endpoint.provider,
        statsKey: endpoint.key,
        pricing: endpoint.pricing,
        limits,
        funding: funded.funding,
        routingProfile: profile,
      });
      if (candidates.length >= MAX_ATTEMPTS) break;
    }
  }
  if (candidates.length === 0) {
    const providers = [...unfunded].join(", ");
    return { ok: false, error: irError("payment_required", `no credential is configured for ${providers || "any provider of this model"}`) };
  }
  return { ok: true, candidates };
}
