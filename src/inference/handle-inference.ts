import { IrDecodeError, irError, type IrError, type IrRequest, type IrWarning, type ProtocolId } from "../ir";
import { codecFor } from "../translation/codec-registry";
import { callUpstream } from "../routing/call-upstream";
import { BodyReader, isIrError, readBodyText } from "../routing/body-reader";
import { planAttempts } from "../routing/plan-attempts";
import type { AttemptRecord } from "../routing/attempt-record";
import type { Services } from "../services";
import { asIrError, authorizeInference, errorInProtocol } from "./inference-error";
import { requestIdFrom } from "./request-id";
import { relayStream } from "./relay-stream";
import { shutdownError } from "./in-flight-requests";
import { log } from "../observability/log";
import { promptChars, tokensFromChars } from "../metering/estimate-tokens";
import { arrivingRequest, usedCapabilities, type RequestOutcome } from "../metering/request-outcome";
import { settleRequest, type Settlement } from "../metering/settle-request";
import { reservationFor, upstreamMaxTokens } from "../metering/admission";
import { withUsageCost } from "../metering/usage-cost";
import { recordAttempt } from "../routing/record-attempt";
import { BodyTooLargeError, closingConnection, readBodyWithin } from "../request-body";

export interface InferenceInput {
  protocol: ProtocolId;
  request: Request;
  /** Generate-content puts model and stream in the path; they are merged into the body. */
  injected?: Record<string, unknown>;
}

/** Upstream statuses that are the caller's own doing: surfaced at once, never retried elsewhere. */
const CALLER_ERROR_STATUSES = new Set([400, 413, 422]);

export function warningsHeader(warnings: IrWarning[]): Record<string, string> {
  if (warnings.length === 0) return {};
  const summary = warnings.map((w) => (w.field ? `${w.code}:${w.field}` : w.code));
  // Field names come from the client's body: anything outside printable ASCII (a NUL, an
  // emoji, a newline) would make the header invalid and the response fail, so it is replaced.
  const value = [...new Set(summary)].join(", ").slice(0, 2000).replace(/[^\x20-\x7e]/g, "?");
  return { "x-switchyard-warnings": value };
}

/**
 * One inference request, end to end (DESIGN.md "One inference request"): authenticate,
 * decode, plan candidates, then attempt them in order, falling through on 429, 5xx,
 * timeouts, network errors and streams that fail before their first token.
 */
export async function handleInference(services: Services, input: InferenceInput): Promise<Response> {
  const { protocol, request } = input;
  const startedAt = performance.now();
  const createdAt = new Date();
  const requestId = requestIdFrom(request.headers);
  const fail = (error: IrError) => errorInProtocol(protocol, error, requestId);

  const authorized = await authorizeInference(services, request.headers, requestId);
  if ("error" in authorized) return fail(authorized.error);
  const principal = authorized.principal;

  const metering = services.config.meteringEnabled;
  const outcome = arrivingRequest({ requestId, principal, clientProtocol: protocol, createdAt, startedAt });
  let settlement: Settlement | undefined;
  // Its settlement receipt says "pending" until the record is in the database.
  if (metering) services.pendingSettlements.add(outcome);
  /** Settles the request exactly once, whichever way it ends. */
  const settle = (status: RequestOutcome["status"], statusCode: number): Settlement | undefined => {
    if (settlement || !metering) return settlement;
    outcome.status = status;
    outcome.statusCode = statusCode;
    settlement = settleRequest(outcome, services.meteringSink);
    // An estimate above the ceiling (characters of an abandoned stream) is the estimator's
    // error; a report above it means a bound in admission is wrong for this upstream.
    if (settlement.uncappedMicroUsd !== undefined && settlement.reported) {
      log.warn("charge capped at the admission reservation", { requestId, reservedMicroUsd: outcome.reservedMicroUsd, computedMicroUsd: settlement.uncappedMicroUsd });
    }
    services.writeBuffer.onWritten(principal.accountId, () => services.pendingSettlements.done(outcome));
    if (outcome.leaseId) services.walletLeases.settle(principal.accountId, outcome.leaseId, outcome.reservedMicroUsd, settlement.chargeMicroUsd);
    return settlement;
  };
  const failAndSettle = (error: IrError) => {
    settle("failed", error.status);
    return fail(error);
  };

  let ir: IrRequest;
  try {
    const body = await readBodyWithin(request, services.config.maxInferenceBodyBytes);
    const decoded = await services.translator.decodeRequest(protocol, body, input.injected);
    ir = decoded.request;
    outcome.warnings.push(...decoded.warnings);
  } catch (error) {
    if (error instanceof IrDecodeError) return failAndSettle(irError("invalid_request", error.message));
    if (error instanceof BodyTooLargeError) return closingConnection(failAndSettle(irError("payload_too_large", error.message)));
    return failAndSettle(internalError(error, requestId));
  }
  outcome.streamed = ir.stream;
  outcome.requestedModel = ir.models?.[0] ?? ir.model;
  outcome.promptChars = promptChars(ir);
  const estimatedPromptTokens = tokensFromChars(outcome.promptChars);
  outcome.usedCapabilities = usedCapabilities(ir);

  const plan = planAttempts(services, ir, estimatedPromptTokens);
  if (!plan.ok) return failAndSettle(plan.error);
  outcome.routingProfile = plan.candidates[0]?.routingProfile;

  if (metering) {
    const reservation = reservationFor(ir, plan.candidates);
    try {
      outcome.namespaceId = await services.namespaces.namespaceFor(principal);
      const leaseId = await services.walletLeases.admit(principal.accountId, reservation);
      if (leaseId === undefined) {
        // The ceiling tells the client what it would take: a smaller max tokens or prompt may fit.
        return failAndSettle(irError("payment_required", `insufficient balance for this request, which can cost up to ${reservation} micro-USD: add credit to the account`));
      }
      outcome.leaseId = leaseId;
    } catch (error) {
      // Budgets cannot be overspent: without the database nothing is admitted (fail closed).
      log.error("admission unavailable", { requestId, error: error instanceof Error ? error.message : String(error) });
      return failAndSettle(irError("internal", "billing is temporarily unavailable; retry shortly", { status: 503, retryAfter: 1 }));
    }
    outcome.reservedMicroUsd = reservation;
  }

  const context = { requestId, model: plan.requestedModel, created: Math.floor(Date.now() / 1000) };
  const attempts = outcome.attempts;
  const warnings = outcome.warnings;
  let lastError: IrError | undefined;

  for (const candidate of plan.candidates) {
    if ((request.signal.aborted && ir.stream) || services.inFlight.graceOver.aborted) break;
    const attempt: AttemptRecord = { ordinal: attempts.length + 1, candidate, outcome: "provider_error", signals: [], startedAt: performance.now() };
    attempts.push(attempt);
    let body: string;
    try {
      // The output limit admission reserved for, when the client set none (src/metering/README.md).
      const maxTokens = upstreamMaxTokens(ir, candidate);
      const attemptIr = maxTokens === undefined ? ir : { ...ir, params: { ...ir.params, maxTokens } };
      const encoded = await services.translator.encodeRequest(candidate.protocol, attemptIr, candidate.providerModelId, ir.stream);
      body = encoded.body;
      warnings.push(...encoded.warnings);
    } catch (error) {
      // The request asks for something this upstream's protocol cannot do (e.g. store: true
      // towards Anthropic): another candidate may still serve it; if none can, it is a 400.
      if (error instanceof IrDecodeError) {
        attempts.pop();
        lastError = irError("invalid_request", error.message);
        continue;
      }
      return failAndSettle(internalError(error, requestId));
    }

    const call = await callUpstream(candidate, body, ir.stream, request.headers, requestId, services.config.upstreamTimeouts, request.signal, services.connectCheck, services.inFlight.graceOver);
    if (!call.ok) {
      // A stream's client hanging up (or shutdown) aborts the upstream call: that says nothing about the provider.
      const clientLeft = (ir.stream && request.signal.aborted) || services.inFlight.graceOver.aborted;
      finishAttempt(services, attempt, clientLeft ? "aborted" : call.error.kind === "upstream_timeout" ? "timeout" : "provider_error", call.error);
      lastError = call.error;
      continue;
    }

    const { response } = call;
    if (response.status < 200 || response.status >= 300) {
      const text = await response.text().catch(() => "");
      call.release();
      const error = codecFor(candidate.protocol).decodeUpstreamError(response.status, parseMaybeJson(text), Object.fromEntries(response.headers));
      attempt.status = response.status;
      if (CALLER_ERROR_STATUSES.has(response.status)) {
        finishAttempt(services, attempt, "client_error", error);
        return failAndSettle(error);
      }
      finishAttempt(services, attempt, "provider_error", error);
      lastError = error;
      continue;
    }
    const passthrough = candidate.protocol === protocol;
    const headers = {
      "x-request-id": requestId,
      "x-switchyard-provider": candidate.providerId,
      ...warningsHeader(warnings),
    };

    if (!ir.stream) {
      try {
        const text = await readBodyText(response, services.config.upstreamTimeouts.idleMs, () => call.controller.abort());
        const translated = await services.translator.translateResponse({ upstream: candidate.protocol, client: protocol, body: text, context });
        attempt.signals.push(translated.signals);
        attempt.firstTokenAt = performance.now();
        finishAttempt(services, attempt, "success");
        outcome.serving = attempt;
        const settled = settle("succeeded", 200);
        // The cost is visible to the client that made the request (chat: usage.cost).
        const body = protocol === "openai-chat" && settled ? withUsageCost(translated.body, settled.chargeMicroUsd) : translated.body;
        return new Response(body, { status: 200, headers: { "content-type": "application/json", ...headers } });
      } catch (error) {
        const irErr = isIrError(error)
          ? error
          : error instanceof IrDecodeError
            ? irError("upstream_invalid_response", `upstream response could not be read: ${error.message}`)
            : internalError(error, requestId);
        finishAttempt(services, attempt, irErr.kind === "upstream_timeout" ? "timeout" : "provider_error", irErr);
        if (irErr.kind === "internal") return failAndSettle(irErr);
        lastError = irErr;
        continue;
      } finally {
        call.release();
      }
    }

    // Only a stream touches `response.body`: asking for it makes Bun build a ReadableStream,
    // which a whole body read with text() does not need (an empty one fails to decode).
    if (!response.body) {
      call.release();
      lastError = irError("upstream_invalid_response", "upstream answered without a body");
      finishAttempt(services, attempt, "provider_error", lastError);
      continue;
    }
    const relayed = await relayStream(services, {
      attempt,
      clientProtocol: protocol,
      passthrough,
      context,
      clientAskedUsage: ir.streamIncludeUsage === true,
      reader: new BodyReader(response.body, services.config.upstreamTimeouts.idleMs, () => call.controller.abort()),
      abortUpstream: () => call.controller.abort(),
      release: call.release,
      headers,
      onFinished: (attemptOutcome, error) => finishAttempt(services, attempt, request.signal.aborted ? "aborted" : attemptOutcome, error),
      settle: (status, interrupted) => {
        outcome.serving = attempt;
        outcome.clientDisconnected = interrupted;
        return settle(status, 200)?.chargeMicroUsd ?? null;
      },
    });
    if (relayed.ok) return relayed.response;
    lastError = relayed.error;
  }

  const finalError = services.inFlight.graceOver.aborted ? shutdownError() : (lastError ?? irError("upstream_unavailable", "no upstream could serve the request"));
  if (ir.stream && request.signal.aborted) {
    // The client left before anything was sent: its cancel, not a failure (499: client closed request).
    settle("cancelled", 499);
    return fail(finalError);
  }
  return failAndSettle(finalError);
}

function finishAttempt(services: Services, attempt: AttemptRecord, outcome: AttemptRecord["outcome"], error?: IrError): void {
  attempt.outcome = outcome;
  attempt.endedAt = performance.now();
  if (error) attempt.error = error;
  recordAttempt(services.endpointStats, attempt);
  services.metrics.upstreamAttempts.inc([attempt.candidate.providerId, outcome]);
}

function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function internalError(error: unknown, requestId: string): IrError {
  log.error("inference failed", { requestId, error: error instanceof Error ? error.message : String(error) });
  return asIrError(error, irError("internal", "internal error"));
}
