import { irError, type IrError } from "../ir";
import type { Principal } from "../auth/principal";
import type { FundingSource } from "../funding/funding-source";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import type { RankedEndpoint } from "../routing/plan-attempts";

/** Never more attempts than this for one request, whatever the fallback list. */
const MAX_ATTEMPTS = 16;

export type Funded = { ok: true; candidates: AttemptCandidate[] } | { ok: false; error: IrError };

/**
 * Stage 4: the credentials of each ranked endpoint; endpoints nothing can pay for are
 * skipped. Within one model, every endpoint funded by the account's own key (BYOK) comes
 * first, in rank order, then the platform-funded ones, in rank order: the customer's
 * contract is used before the platform's money, which stays the fallback. Once
 * MAX_ATTEMPTS candidates are in, each further model in `models` adds at most its best
 * funded endpoint. No candidate at all is a 402 naming the providers without a credential.
 */
export async function fund(source: FundingSource, principal: Principal, byModel: readonly RankedEndpoint[][]): Promise<Funded> {
  const candidates: AttemptCandidate[] = [];
  const unfunded = new Set<string>();
  for (const ranked of byModel) {
    const own: AttemptCandidate[] = [];
    const platform: AttemptCandidate[] = [];
    for (const { endpoint, profile, limits } of ranked) {
      const fundings = await source.fund(principal, endpoint);
      if (fundings.length === 0) unfunded.add(endpoint.provider);
      for (const funded of fundings) {
        (funded.funding === "byok" ? own : platform).push({
          protocol: endpoint.protocol,
          baseUrl: funded.baseUrl ?? endpoint.baseUrl,
          providerModelId: endpoint.providerModelId,
          apiKey: funded.apiKey,
          modelId: endpoint.modelId,
          providerId: endpoint.provider,
          statsKey: endpoint.key,
          pricing: endpoint.pricing,
          limits,
          funding: funded.funding,
          ...(funded.funding === "byok" ? { byokNamespaceId: funded.byokNamespaceId ?? null } : {}),
          routingProfile: profile,
          ...(funded.baseUrl === undefined ? {} : { customerSuppliedBase: true }),
        });
      }
    }
    const modelCandidates = [...own, ...platform];
    // Past the cap, a further model adds only its best candidate.
    const room = candidates.length >= MAX_ATTEMPTS ? 1 : MAX_ATTEMPTS - candidates.length;
    candidates.push(...modelCandidates.slice(0, room));
  }
  if (candidates.length === 0) {
    const providers = [...unfunded].join(", ");
    return { ok: false, error: irError("payment_required", `no credential is configured for ${providers || "any provider of this model"}`) };
  }
  return { ok: true, candidates };
}
