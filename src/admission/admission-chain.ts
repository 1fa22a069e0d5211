import { NO_POLICY } from "../policy/compose-policies";
import { ENDED, isRefusal, NOTHING_HELD, type AdmissionCheck, type AdmissionRequest, type Grant, type RateLimitStatus, type Refusal, type SettleOutcome } from "./admission-check";

/**
 * Several checks as one: each runs in order, and the first refusal ends admission after
 * releasing the grants of the checks before it (a refused request holds nothing). The
 * grant settles or releases every check's grant.
 *
 * `policyChecks` run only when the request has an effective policy: a request whose
 * policy is `NO_POLICY` goes straight to `alwaysChecks` (the wallet), one identity
 * comparison and nothing else. Order the cheap, local checks first (guardrails are pure
 * CPU), and the ones that hold something last, so a refusal undoes as little as possible:
 * guardrails, then budgets and rate limits, then the wallet.
 */
export class AdmissionChain implements AdmissionCheck {
  readonly name = "admission";
  private readonly withPolicy: readonly AdmissionCheck[];

  constructor(
    policyChecks: readonly AdmissionCheck[],
    private readonly alwaysChecks: readonly AdmissionCheck[] = [],
  ) {
    this.withPolicy = [...policyChecks, ...alwaysChecks];
  }

  /** True when no request can be refused or held by this chain (no checks at all). */
  get empty(): boolean {
    return this.withPolicy.length === 0;
  }

  admit(request: AdmissionRequest): Promise<Grant | Refusal> {
    const checks = request.policy === NO_POLICY ? this.alwaysChecks : this.withPolicy;
    return checks.length === 0 ? ADMITTED : runChecks(checks, request);
  }
}

async function runChecks(checks: readonly AdmissionCheck[], request: AdmissionRequest): Promise<Grant | Refusal> {
  let held: Grant[] | undefined;
  for (const check of checks) {
    let result: Grant | Refusal;
    try {
      result = await check.admit(request);
    } catch (error) {
      if (held) await releaseAll(held);
      throw error;
    }
    if (isRefusal(result)) {
      if (held) await releaseAll(held);
      return result;
    }
    if (result !== NOTHING_HELD) (held ??= []).push(result);
  }
  if (!held) return NOTHING_HELD;
  return held.length === 1 ? held[0]! : new CombinedGrant(held);
}

/** Shared: admitting a request that nothing checks allocates nothing, not even a promise. */
const ADMITTED: Promise<Grant | Refusal> = Promise.resolve(NOTHING_HELD);

class CombinedGrant implements Grant {
  readonly kind = "grant" as const;
  readonly rateLimits: RateLimitStatus | undefined;
  constructor(private readonly grants: readonly Grant[]) {
    this.rateLimits = grants.find((grant) => grant.rateLimits !== undefined)?.rateLimits;
  }

  settle(outcome: SettleOutcome): Promise<void> {
    return allEnded(this.grants.map((grant) => grant.settle(outcome)));
  }

  release(): Promise<void> {
    return releaseAll(this.grants);
  }
}

function releaseAll(grants: readonly Grant[]): Promise<void> {
  return allEnded(grants.map((grant) => grant.release()));
}

/** ENDED when every part ended in memory (so the pipeline waits for nothing), else when all have. */
function allEnded(ends: Promise<void>[]): Promise<void> {
  return ends.every((end) => end === ENDED) ? ENDED : Promise.all(ends).then(() => undefined);
}
