import { NO_POLICY } from "../policy/compose-policies";
import { isRefusal, NOTHING_HELD, type AdmissionCheck, type AdmissionInput, type Grant, type Refusal, type SettleOutcome } from "./policy-admission";

/**
 * Several checks as one: each runs in order, and the first refusal ends admission after
 * releasing the grants of the checks before it (a refused request holds nothing). The
 * grant settles or releases every check's grant. A request whose effective policy is
 * `NO_POLICY` is admitted by identity, before any check runs: no allocation, no query.
 *
 * Order the cheap, local checks first (guardrails are pure CPU), and the ones that hold
 * something last, so a refusal undoes as little as possible.
 */
export class AdmissionChain implements AdmissionCheck {
  constructor(private readonly checks: readonly AdmissionCheck[]) {}

  admit(input: AdmissionInput): Promise<Grant | Refusal> {
    return input.policy === NO_POLICY ? ADMITTED : this.runChecks(input);
  }

  private async runChecks(input: AdmissionInput): Promise<Grant | Refusal> {
    let held: Grant[] | undefined;
    for (const check of this.checks) {
      let result: Grant | Refusal;
      try {
        result = await check.admit(input);
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
}

/** Shared: admitting a request without policy allocates nothing, not even a promise. */
const ADMITTED: Promise<Grant | Refusal> = Promise.resolve(NOTHING_HELD);

class CombinedGrant implements Grant {
  readonly kind = "grant" as const;
  constructor(private readonly grants: readonly Grant[]) {}

  async settle(outcome: SettleOutcome): Promise<void> {
    await Promise.all(this.grants.map((grant) => grant.settle(outcome)));
  }

  release(): Promise<void> {
    return releaseAll(this.grants);
  }
}

async function releaseAll(grants: readonly Grant[]): Promise<void> {
  await Promise.all(grants.map((grant) => grant.release()));
}
