import type { IrFinish } from "../ir";
import { buildUsageEvidence, type AttemptUsage } from "./usage-evidence";
import { computeCharge, type ChargeResult, type NormalisedUsage } from "./compute-charge";
import { isoTimestamp } from "./iso-timestamp";
import type { ChargeAudit, MeteringSink } from "./metering-rows";
import { attemptSummaries } from "./attempt-summary";
import { finishText, type RequestOutcome } from "./request-outcome";
import type { AttemptRecord } from "../routing/attempt-record";

export interface Settlement {
  charge: ChargeResult;
  /** What the client is told (usage.cost) and what the ledger debits; null when unknown. */
  chargeMicroUsd: number | null;
  /** The computed charge when it exceeded the reservation and was capped to it. */
  uncappedMicroUsd?: number;
  /** Whether the usage priced was the upstream's report (else an estimate). */
  reported: boolean;
  /** Attempts charged besides the serving one (answered 2xx, then failed before serving). */
  unservedCharged: number;
  /** The usage priced (the request record's token counts). */
  usage: NormalisedUsage;
}

const round = (ms: number | undefined) => (ms === undefined ? null : Math.max(0, Math.round(ms)));

/**
 * Turns a finished request into its rows: the request record with usage evidence,
 * one usage frame per report of every attempt, a billing-audit entry for a computed
 * charge, and exactly one ledger entry that settles the wallet and releases the
 * reservation. Pure apart from handing rows to the sink; the price is the catalog
 * endpoint's that served, never a model name the upstream echoed.
 */
export function settleRequest(outcome: RequestOutcome, sink: MeteringSink, now = Date.now()): Settlement {
  const serving = outcome.serving;
  const attempts: AttemptUsage[] = outcome.attempts.map((attempt) => ({
    ordinal: attempt.ordinal,
    providerId: attempt.candidate.providerId,
    providerModelId: attempt.candidate.providerModelId,
    // The one place funding becomes a frame's account_label, whose wire word for the wallet is "platform".
    accountLabel: attempt.candidate.funding === "cloud_credit" ? "platform" : "byok",
    usageFrames: attempt.signals.flatMap((signals) => signals.usageFrames),
  }));
  const servedFrames = serving ? attempts.find((a) => a.ordinal === serving.ordinal)?.usageFrames.length ?? 0 : 0;
  // A served stream that ended early never got its final usage report (Anthropic's
  // message_start says output_tokens: 1); a whole answer's report is final even when a
  // response-side check refused it.
  const interrupted = !outcome.usageFinal && (outcome.clientDisconnected || outcome.status === "failed");
  const needsEstimate = serving !== undefined && (interrupted || servedFrames === 0);
  const reason = outcome.clientDisconnected ? "client_disconnected" : interrupted ? "stream_failed" : "usage_missing";
  const { evidence, usage } = buildUsageEvidence({
    attempts,
    servingAttemptOrdinal: serving?.ordinal,
    // What the serving attempt produced was read (relayed, or a whole body): its bytes bound its output.
    ...(needsEstimate ? { estimate: { reason, ...estimateFor(outcome, serving, true) } } : {}),
  });
  // A request served with the account's own key (BYOK) is billed by the provider to the
  // customer: its tokens are recorded, the wallet is charged nothing.
  const byok = serving?.candidate.funding === "byok";
  const servedCharge: ChargeResult = serving && !byok ? computeCharge(usage, serving.candidate.pricing) : { status: "not_charged", chargeMicroUsd: 0 };
  // Attempts the provider answered 200 that then failed before their answer could be used
  // (a body cut or unreadable, a stream broken before its first token) were billed by the
  // provider all the same: each adds its own charge, on its report or an upper bound.
  const unserved = outcome.attempts.filter((attempt) => attempt !== serving && billedWithoutServing(attempt, outcome.streamed));
  const extra = unserved.map((attempt) => ({ attempt, charge: chargeOfUnserved(outcome, attempt) }));
  const charge = withExtraCharges(servedCharge, extra.map((e) => e.charge));
  const extraWarnings = extra.map(({ attempt, charge: result }) => ({
    code: "attempt_charged",
    message: `attempt ${attempt.ordinal} (${attempt.candidate.providerId}) was answered 200 by the provider and failed before its answer could be used; charged ${result.chargeMicroUsd ?? "an unknown amount of"} micro-USD for it`,
  }));
  const reserved = outcome.leaseId === undefined ? undefined : outcome.reservedMicroUsd;
  const uncapped = charge.chargeMicroUsd;
  const chargeMicroUsd = uncapped !== null && reserved !== undefined && uncapped > reserved ? reserved : uncapped;
  const capped = chargeMicroUsd !== uncapped;
  const warnings = capped
    ? [...outcome.warnings, ...extraWarnings, { code: "charge_capped", message: `computed charge ${uncapped} micro-USD (${evidence.source} usage) exceeds the ${reserved} micro-USD reserved at admission; ${reserved} debited` }]
    : extraWarnings.length > 0
      ? [...outcome.warnings, ...extraWarnings]
      : outcome.warnings;
  const account = outcome.principal.accountId;

  const firstToken = serving?.signals.find((s) => s.firstToken)?.firstToken ?? null;
  let finish: IrFinish | undefined;
  for (const signals of serving?.signals ?? []) if (signals.finish) finish = signals.finish;
  sink.request({
    id: outcome.recordId,
    request_id: outcome.requestId,
    account_id: account,
    namespace_id: outcome.namespaceId,
    api_key_id: outcome.principal.kind === "api_key" ? outcome.principal.id : null,
    oauth_token_id: outcome.principal.kind === "oauth_token" ? outcome.principal.id : null,
    status: outcome.status,
    status_code: outcome.statusCode,
    billing_status: charge.status,
    model_id: serving?.candidate.modelId ?? outcome.requestedModel ?? null,
    provider_id: serving?.candidate.providerId ?? null,
    provider_model_id: serving?.candidate.providerModelId ?? null,
    routing_profile: outcome.routingProfile ?? null,
    funding_source: byok ? "byok" : "cloud_credit",
    streamed: outcome.streamed,
    finish_reason: finishText(finish),
    first_token_kind: firstToken,
    prompt_tokens: usage.promptTokens ?? 0,
    completion_tokens: usage.completionTokens ?? 0,
    reasoning_tokens: usage.reasoningTokens ?? 0,
    cache_read_tokens: usage.cacheReadTokens ?? 0,
    cache_write_tokens: usage.cacheWriteTokens ?? 0,
    final_charge_micro_usd: chargeMicroUsd,
    request_duration_ms: Math.max(0, Math.round(performance.now() - outcome.startedAt)),
    upstream_duration_ms: serving ? round((serving.endedAt ?? performance.now()) - serving.startedAt) : null,
    generation_duration_ms: serving?.firstTokenAt !== undefined ? round((serving.endedAt ?? performance.now()) - serving.firstTokenAt) : null,
    ttft_ms: serving?.firstTokenAt !== undefined ? round(serving.firstTokenAt - serving.startedAt) : null,
    used_capabilities: outcome.usedCapabilities,
    usage_evidence: evidence,
    warnings,
    attempts: attemptSummaries(outcome.attempts),
    // The frames are in `usage_evidence`; a computed charge keeps what it was computed from.
    charge_audit: chargeAudit(serving, servedCharge, extra),
    created_at: isoTimestamp(outcome.createdAt.getTime()),
    completed_at: isoTimestamp(now),
  });
  if (chargeMicroUsd !== 0 && (!byok || extra.length > 0)) {
    // One entry per charged request: the debit, which also leaves the wallet lease. An
    // unknown charge cannot be debited: it is recorded as pending recovery instead.
    sink.ledger({
      id: `le_${outcome.recordId}`,
      account_id: account,
      namespace_id: outcome.namespaceId,
      request_record_id: outcome.recordId,
      kind: chargeMicroUsd === null ? "pending_debit_recovery" : "usage",
      // `0 - charge`, not `-charge`: with the negation, JavaScriptCore's optimised
      // settleRequest left for its baseline code at this entry on ~17 % of calls, an exit it
      // does not count toward recompiling, so it never stopped (test/bench/HISTORY.md).
      amount_micro_usd: chargeMicroUsd === null ? 0 : 0 - chargeMicroUsd,
      released_micro_usd: chargeMicroUsd ?? 0,
      lease_id: outcome.leaseId ?? null,
    });
  }
  const reported = evidence.source === "provider_reported";
  const unservedCharged = extra.length;
  return capped && uncapped !== null ? { charge, chargeMicroUsd, uncappedMicroUsd: uncapped, reported, usage, unservedCharged } : { charge, chargeMicroUsd, reported, usage, unservedCharged };
}

/** An upper-bound estimate for `attempt`'s usage (estimate-tokens.ts): the prompt ceiling, and the output's bytes within the output ceiling. */
function estimateFor(outcome: RequestOutcome, attempt: AttemptRecord | undefined, outputSeen: boolean): { promptTokens: number; completionTokens: number } {
  if (attempt === undefined || outcome.bounds === undefined) return { promptTokens: 0, completionTokens: 0 };
  const ceiling = outcome.bounds.completionTokens(attempt.candidate);
  const outputBytes = attempt.signals.reduce((sum, s) => sum + s.outputBytes, 0);
  // Output that was seen (relayed, or a whole body read) is billed by its bytes; a whole body
  // is produced before it is sent, so one that never arrived whole was generated whole: its
  // output is bounded by the ceiling alone.
  return { promptTokens: outcome.bounds.promptTokens(attempt.candidate), completionTokens: outputSeen ? Math.min(outputBytes, ceiling) : ceiling };
}

/**
 * The provider answered 2xx and then the attempt failed before serving, with evidence that
 * it billed the call: a whole body (generated before it is sent) that was cut or unreadable;
 * a stream that reported usage or produced output before it broke. A stream whose first
 * event was the provider's error (a quota error, an overload) produced nothing and is not
 * billed by the vendors.
 */
function billedWithoutServing(attempt: AttemptRecord, streamed: boolean): boolean {
  if (attempt.status === undefined || attempt.status < 200 || attempt.status >= 300 || attempt.candidate.funding !== "cloud_credit") return false;
  if (!streamed) return true;
  return attempt.signals.some((signals) => signals.usageFrames.length > 0 || signals.outputBytes > 0);
}

/** What an attempt that never served costs: its reported usage where final, else the upper-bound estimate. */
function chargeOfUnserved(outcome: RequestOutcome, attempt: AttemptRecord): ChargeResult {
  const frames = attempt.signals.flatMap((signals) => signals.usageFrames);
  const { usage } = buildUsageEvidence({
    attempts: [{ ordinal: attempt.ordinal, providerId: attempt.candidate.providerId, providerModelId: attempt.candidate.providerModelId, accountLabel: "platform", usageFrames: frames }],
    servingAttemptOrdinal: attempt.ordinal,
    estimate: { reason: "stream_failed", ...estimateFor(outcome, attempt, outcome.streamed) },
  });
  return computeCharge(usage, attempt.candidate.pricing);
}

/**
 * The served attempt's charge plus those of attempts billed without serving; unknown when
 * any part is. The buckets and rates stay the served attempt's (each unserved attempt's
 * are in the charge audit).
 */
function withExtraCharges(served: ChargeResult, extras: readonly ChargeResult[]): ChargeResult {
  if (extras.length === 0) return served;
  const unknownPart = [served, ...extras].find((part) => part.status === "unknown");
  if (unknownPart !== undefined) return unknownPart;
  const total = extras.reduce((sum, extra) => sum + (extra.chargeMicroUsd ?? 0), served.chargeMicroUsd ?? 0);
  if (total === 0) return { status: "not_charged", chargeMicroUsd: 0 };
  const priced = [served, ...extras].find((part) => part.status === "computed")!;
  return { ...priced, chargeMicroUsd: total } as ChargeResult;
}

/** What a computed charge was summed from: the serving endpoint's pricing and buckets, and each attempt billed without serving. */
function chargeAudit(serving: AttemptRecord | undefined, served: ChargeResult, extra: ReadonlyArray<{ attempt: AttemptRecord; charge: ChargeResult }>): ChargeAudit | null {
  const base = served.status === "computed" && serving ? { pricing: serving.candidate.pricing, buckets: served.buckets } : null;
  if (extra.length === 0) return base;
  return {
    ...(base ?? {}),
    unserved_attempts: extra.map(({ attempt, charge }) => ({
      attempt_ordinal: attempt.ordinal,
      pricing: attempt.candidate.pricing,
      charge_micro_usd: charge.chargeMicroUsd,
      ...(charge.status === "computed" ? { buckets: charge.buckets } : {}),
    })),
  };
}
