import type { EffectiveGuardrail } from "../policy/effective-policy";
import { NOTHING_HELD, permissionDenied, type AdmissionCheck, type AdmissionRequest, type Grant, type Refusal } from "./admission-check";
import { scanPatterns, scanStep, type CandidateMemo, type PatternSet } from "./content-scanner";

/**
 * How much CPU time one request's content scan may take. Patterns are polynomial at worst
 * (src/policy/README.md) and each window's cost is bounded, so the scan checks the clock
 * between windows; a request whose text is not judged by then is refused (fail closed):
 * a guardrail that could not look is not a guardrail that passed.
 */
export const DEFAULT_SCAN_DEADLINE_MS = 100;

/**
 * The process's CPU time in ms: the scan's clock. The scan runs synchronously on the main
 * thread, so this counts its own work (plus what the process's other threads do meanwhile)
 * and not the time the machine gave other processes: a busy machine slows a scan down
 * without making it refuse a request it would judge in time on an idle one.
 */
export function processCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Clock checks every this many scan steps (each at most one window per pattern). */
const STEPS_PER_CLOCK_CHECK = 16;

export interface GuardrailCheckOptions {
  scanDeadlineMs?: number;
  now?: () => number;
}

/**
 * The guardrails of a request, most-restrictive-wins as composed (src/policy/README.md):
 * in order, the model (deny lists, then every allow list), streaming, max tokens, the
 * BYOK rule, then request-side `block` content patterns over system, messages,
 * reasoning, tool-call arguments and tool results. Any of them refuses with 403
 * `permission_denied` naming its policy. Pure CPU: nothing is held, nothing to settle.
 */
export class GuardrailCheck implements AdmissionCheck {
  readonly name = "guardrails";
  private readonly deadlineMs: number;
  private readonly now: () => number;
  /** Block patterns per guardrail (guardrails are memoised by the policy store, so this stays small). */
  private readonly blockPatterns = new WeakMap<EffectiveGuardrail, PatternSet>();

  constructor(options: GuardrailCheckOptions = {}) {
    this.deadlineMs = options.scanDeadlineMs ?? DEFAULT_SCAN_DEADLINE_MS;
    this.now = options.now ?? processCpuMs;
  }

  admit(input: AdmissionRequest): Promise<Grant | Refusal> {
    const guardrail = input.policy.guardrail;
    if (guardrail === null) return Promise.resolve(NOTHING_HELD);
    return Promise.resolve(this.judge(guardrail, input) ?? NOTHING_HELD);
  }

  /** The refusal of the first guardrail the request breaks, or undefined. */
  judge(guardrail: EffectiveGuardrail, input: AdmissionRequest): Refusal | undefined {
    // Every model the request may be served by: a fallback in `models` is judged like the first.
    const refused = modelRefusal(guardrail, input.model);
    if (refused) return refused;
    for (const candidate of input.candidates) {
      if (candidate.modelId === input.model) continue;
      const fallback = modelRefusal(guardrail, candidate.modelId);
      if (fallback) return fallback;
    }
    if (input.stream && guardrail.streamingForbiddenBy) {
      const source = guardrail.streamingForbiddenBy;
      return permissionDenied(source, `streaming is not allowed by policy "${source.policyName}"`);
    }
    const cap = guardrail.maxRequestTokens;
    if (cap && input.maxTokens !== undefined && input.maxTokens > cap.value) {
      return permissionDenied(cap.source, `max tokens ${input.maxTokens} exceeds ${cap.value}, the limit of policy "${cap.source.policyName}"`);
    }
    const byok = guardrail.byok;
    if (byok) {
      if (byok.rule === "conflict") {
        const source = input.funding === "byok" ? byok.forbidden[0]! : byok.required[0]!;
        return permissionDenied(source, `policies "${byok.required[0]!.policyName}" and "${byok.forbidden[0]!.policyName}" require and forbid your own provider key: no request can pass`);
      }
      if (byok.rule === "required" && input.funding !== "byok") {
        return permissionDenied(byok.sources[0]!, `policy "${byok.sources[0]!.policyName}" requires a request funded by your own provider key (BYOK)`);
      }
      if (byok.rule === "forbidden" && input.funding === "byok") {
        return permissionDenied(byok.sources[0]!, `policy "${byok.sources[0]!.policyName}" forbids requests funded by your own provider key (BYOK)`);
      }
    }
    const patterns = this.blockPatternsOf(guardrail);
    return patterns.patterns.length === 0 ? undefined : this.scan(patterns, input.texts());
  }

  private blockPatternsOf(guardrail: EffectiveGuardrail): PatternSet {
    let patterns = this.blockPatterns.get(guardrail);
    if (!patterns) {
      patterns = scanPatterns(
        guardrail.contentPatterns.filter((pattern) => pattern.action === "block"),
        { windowed: true },
      );
      this.blockPatterns.set(guardrail, patterns);
    }
    return patterns;
  }

  /**
   * The first block match over the texts, in bounded windows, within the deadline (CPU
   * time). The clock is first read at the first check, STEPS_PER_CLOCK_CHECK steps in:
   * reading the process's CPU time is a system call, dearer than scanning a whole ordinary
   * prompt, and the steps before it are bounded (one window per pattern each).
   */
  private scan(patterns: PatternSet, texts: Iterable<string>): Refusal | undefined {
    let deadline: number | undefined;
    let steps = 0;
    for (const text of texts) {
      let pos = 0;
      const memo: CandidateMemo = [];
      while (pos < text.length) {
        const step = scanStep(patterns, text, pos, true, memo);
        if (step.kind === "match") {
          const { source, spec } = step.clause;
          return permissionDenied(source, `the request was blocked by content pattern "${spec.name}" of policy "${source.policyName}"`);
        }
        // A complete text is always decided: need_more cannot occur.
        pos = step.kind === "clear" ? step.until : text.length;
        if (++steps % STEPS_PER_CLOCK_CHECK === 0 && this.now() > (deadline ??= this.now() + this.deadlineMs)) {
          const source = patterns.patterns[0]!.clause.source;
          return permissionDenied(source, `the request's content could not be checked against the content patterns of policy "${source.policyName}" in time; send less text`);
        }
      }
    }
    return undefined;
  }
}

function modelRefusal(guardrail: EffectiveGuardrail, model: string): Refusal | undefined {
  const denied = guardrail.modelDeny.get(model);
  if (denied) return permissionDenied(denied, `model ${model} is denied by policy "${denied.policyName}"`);
  for (const allow of guardrail.modelAllowLists) {
    if (!allow.models.has(model)) return permissionDenied(allow.source, `model ${model} is not allowed by policy "${allow.source.policyName}"`);
  }
  return undefined;
}
