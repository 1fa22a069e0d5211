import type { IrWarning } from "../ir";
import type { Refusal } from "../admission/admission-check";
import { refusalError, refusalWarning } from "../admission/admission-refusal";
import { guardResponse, ResponseGuard, type GuardedParts } from "../admission/response-guard";
import type { EffectivePolicy } from "../policy/effective-policy";
import type { GuardedOutput, PartGuard, ResponseRewrite } from "../translation/translation-types";

/** The response-side checks of one request, for each of its attempts. */
export interface ResponseCheck {
  /** A new guard for one streamed attempt (it holds the state of that stream). */
  stream(): PartGuard;
  /** The check over one whole answer. */
  whole: ResponseRewrite;
}

/**
 * The response side of a request's guardrail (docs/api/policies.md "Policies"): undefined when no
 * content pattern applies, so an answer without one is relayed as before, with no
 * holdback and no translation it would not otherwise need. A refusal becomes the
 * protocol's 403 and the record's note of the refusing policy.
 */
export function responseCheckFor(policy: EffectivePolicy, warnings: IrWarning[]): ResponseCheck | undefined {
  const guardrail = policy.guardrail;
  if (guardrail === null || guardrail.contentPatterns.length === 0) return undefined;
  const refused = (refusal: Refusal) => {
    const warning = refusalWarning(refusal);
    if (warning) warnings.push(warning);
    return refusalError(refusal);
  };
  const adapt = (guarded: GuardedParts): GuardedOutput => (guarded.refusal ? { parts: guarded.parts, refused: refused(guarded.refusal) } : guarded);
  return {
    stream() {
      const guard = ResponseGuard.for(guardrail)!;
      return { onPart: (part) => adapt(guard.onPart(part)), flush: () => adapt(guard.flush()) };
    },
    whole(response) {
      const guarded = guardResponse(guardrail, response);
      return guarded.refusal ? { response, refused: refused(guarded.refusal) } : { response: guarded.response };
    },
  };
}
