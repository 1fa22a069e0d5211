import type { IrFinish } from "../ir";
import { buildUsageEvidence, type AttemptUsage } from "./usage-evidence";
import { computeCharge, type ChargeResult, type NormalisedUsage } from "./compute-charge";
import { isoTimestamp } from "./iso-timestamp";
import type { MeteringSink } from "./metering-rows";
import { attemptSummaries } from "./attempt-summary";
import { finishText, type RequestOutcome } from "./request-outcome";

export interface Settlement {
  charge: ChargeResult;
  /** What the client is told (usage.cost) and what the ledger debits; null when unknown. */
  chargeMicroUsd: number | null;
  /** The computed charge when it exceeded the reservation and was capped to it. */
  uncappedMicroUsd?: number;
  /** Whether the usage priced was the upstream's report (else an estimate). */
  reported: boolean;
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
  const outputChars = serving ? serving.signals.reduce((sum, s) => sum + s.outputChars, 0) : 0;
  // A served stream that failed midway never got its final usage report (Anthropic's message_start says output_tokens: 1).
  const interrupted = outcome.clientDisconnected || outcome.status === "failed";
  const needsEstimate = serving !== undefined && (interrupted || servedFrames === 0);
  const reason = outcome.clientDisconnected ? "client_disconnected" : outcome.status === "failed" ? "stream_failed" : "usage_missing";
  const { evidence, usage } = buildUsageEvidence({
    attempts,
    servingAttemptOrdinal: serving?.ordinal,
    ...(needsEstimate
      ? { estimate: { reason, promptChars: outcome.promptChars, outputChars } }
      : {}),
  });
  // A request served with the account's own key (BYOK) is billed by the provider to the
  // customer: its tokens are recorded, the wallet is charged nothing.
  const byok = serving?.candidate.funding === "byok";
  const charge: ChargeResult = serving && !byok ? computeCharge(usage, serving.candidate.pricing) : { status: "not_charged", chargeMicroUsd: 0 };
  // A wallet is never debited more than admission reserved, so concurrent requests cannot
  // overspend it. The reservation bounds every honest report; usage above it (an upstream
  // reporting more than it could bill, an estimate for an abandoned stream) is kept in the
  // record and its frames, and the record says the charge was capped.
  const reserved = outcome.leaseId === undefined ? undefined : outcome.reservedMicroUsd;
  const uncapped = charge.chargeMicroUsd;
  const chargeMicroUsd = uncapped !== null && reserved !== undefined && uncapped > reserved ? reserved : uncapped;
  const capped = chargeMicroUsd !== uncapped;
  const warnings = capped
    ? [...outcome.warnings, { code: "charge_capped", message: `computed charge ${uncapped} micro-USD (${evidence.source} usage) exceeds the ${reserved} micro-USD reserved at admission; ${reserved} debited` }]
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
    charge_audit: charge.status === "computed" && serving ? { pricing: serving.candidate.pricing, buckets: charge.buckets } : null,
    created_at: isoTimestamp(outcome.createdAt.getTime()),
    completed_at: isoTimestamp(now),
  });
  if (!byok && chargeMicroUsd !== 0) {
    // One entry per charged request: the debit, which also leaves the wallet lease. An
    // unknown charge cannot be debited: it is recorded as pending recovery instead.
    sink.ledger({
      id: `le_${outcome.recordId}`,
      account_id: account,
      namespace_id: outcome.namespaceId,
      request_record_id: outcome.recordId,
      kind: chargeMicroUsd === null ? "pending_debit_recovery" : "usage",
      amount_micro_usd: chargeMicroUsd === null ? 0 : -chargeMicroUsd,
      released_micro_usd: chargeMicroUsd ?? 0,
      lease_id: outcome.leaseId ?? null,
    });
  }
  const reported = evidence.source === "provider_reported";
  return capped && uncapped !== null ? { charge, chargeMicroUsd, uncappedMicroUsd: uncapped, reported, usage } : { charge, chargeMicroUsd, reported, usage };
}
