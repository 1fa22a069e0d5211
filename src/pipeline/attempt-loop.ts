import { IrDecodeError, irError, type IrError, type IrRequest, type IrWarning } from "../ir";
import type { Translator } from "../translation/translator";
import { codecFor } from "../translation/codec-registry";
import { callUpstream, type PinnedHost, type UpstreamTimeouts } from "../routing/call-upstream";
import type { ConnectCheck } from "../routing/connect-check";
import { BodyReader, readBodyText } from "../routing/body-reader";
import type { AttemptCandidate } from "../routing/attempt-candidate";
import type { AttemptRecord } from "../routing/attempt-record";
import { upstreamMaxTokens } from "../admission/cost-ceiling";
import type { RequestContext } from "./request-context";
import type { StreamObserver } from "./stream-observer";
import { finishAttempt, type AttemptTelemetry } from "./attempt-accounting";
import { respondJson, type AnswerBody } from "./respond-json";
import type { AnswerBytes } from "../routing/answer-bytes";
import { relayStream, type RelayDeps } from "./relay-stream";
import { internalError } from "./inference-error";
import { shutdownError } from "./in-flight-requests";
import type { ResponseCheck } from "./response-check";
import type { ByokKeyStore } from "../byok/byok-key-store";
import type { EgressGuard } from "../egress/egress-guard";
import { opaqueUpstreamError } from "../egress/opaque-upstream-error";
import type { UpstreamTarget } from "../routing/upstream-request";
import { log } from "../observability/log";
import { logUnreachableUpstream } from "../routing/unreachable-upstream-log";

/** The most of an upstream's error body read: its message, never a body it streams without end. */
const ERROR_BODY_MAX_BYTES = 1024 * 1024;

export interface AttemptDeps extends AttemptTelemetry, RelayDeps {
  translator: Translator;
  timeouts: UpstreamTimeouts;
  connectCheck: ConnectCheck;
  /** Aborted at the shutdown grace limit: no new attempt starts, calls under way stop. */
  graceOver: AbortSignal;
  /** The most of one upstream answer read into memory (MAX_UPSTREAM_BODY_BYTES); a longer one is the upstream's failure. */
  maxUpstreamBodyBytes: number;
  /** A whole answer longer than this is read as bytes, which the translator's pool takes as they are. */
  answerBytesAbove: number;
  /** Each account's room for large whole answers in flight on this process. */
  answerBytes: AnswerBytes;
  /** Where a customer's key the provider refused is noted (never awaited). */
  byokKeys: Pick<ByokKeyStore, "recordRefusal" | "recordUse">;
  /** Checks a customer-supplied base (BYOK `api_base`) before each call and pins the address it checked. */
  egress: Pick<EgressGuard, "destination">;
}

export interface AttemptInput {
  context: RequestContext;
  ir: IrRequest;
  /** The model the client asked for first: the one its answer names. */
  requestedModel: string;
  candidates: readonly AttemptCandidate[];
  /** The record's attempts and warnings, appended to as they happen. */
  attempts: AttemptRecord[];
  warnings: IrWarning[];
  /** The observer of a stream relayed for `attempt`: accounting and settlement. */
  observe: (attempt: AttemptRecord) => StreamObserver;
  /** Response-side content checks; undefined when no content pattern applies (nothing held back, nothing translated for it). */
  responseCheck: ResponseCheck | undefined;
}

export type AttemptsResult =
  /** A whole answer, not yet settled: its charge goes into the body. */
  | { ok: true; kind: "answer"; attempt: AttemptRecord; body: AnswerBody; headers: Record<string, string> }
  /** A committed stream: it settles through its observer. */
  | { ok: true; kind: "stream"; response: Response }
  /**
   * Nothing reached the client. `cancelled`: a stream's client left before anything was sent.
   * `refused`: a response-side check refused the answer `attempt` served (`whole`: read in
   * full, so its usage report is final) — the request is charged for it.
   */
  | { ok: false; error: IrError; cancelled: boolean; refused?: { attempt: AttemptRecord; whole: boolean } };

/** Upstream statuses that are the caller's own doing: surfaced at once, never retried elsewhere. */
const CALLER_ERROR_STATUSES = new Set([400, 413, 422]);

/** Upstream statuses that mean the provider refused the credential. */
const REFUSED_KEY_KINDS: ReadonlyMap<number, string> = new Map([
  [401, "unauthorized"],
  [403, "forbidden"],
]);

/**
 * Stage 6: the candidates in order, falling through on 429, 5xx, timeouts, network errors
 * and streams that fail before their first token (docs/api/inference.md "Inference"). Each attempt is
 * encoded for its upstream, called, and answered by respond-json.ts or relay-stream.ts.
 */
export async function runAttempts(deps: AttemptDeps, input: AttemptInput): Promise<AttemptsResult> {
  const { context, ir, attempts, warnings } = input;
  const { request, protocol, requestId } = context;
  const codecContext = { requestId, model: input.requestedModel, created: Math.floor(Date.now() / 1000) };
  const finish = (attempt: AttemptRecord, outcome: AttemptRecord["outcome"], error?: IrError) => finishAttempt(deps, attempt, outcome, error);
  let lastError: IrError | undefined;

  for (const candidate of input.candidates) {
    if ((request.signal.aborted && ir.stream) || deps.graceOver.aborted) break;
    const attempt: AttemptRecord = { ordinal: attempts.length + 1, candidate, outcome: "provider_error", signals: [], startedAt: performance.now() };
    attempts.push(attempt);
    let body: string | Blob;
    try {
      // The output limit admission reserved for, when the client set none (src/admission/README.md).
      const maxTokens = upstreamMaxTokens(ir, candidate);
      const attemptIr = maxTokens === undefined ? ir : { ...ir, params: { ...ir.params, maxTokens } };
      const encoded = await deps.translator.encodeRequest(candidate.protocol, attemptIr, candidate.providerModelId, ir.stream);
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
      return { ok: false, error: internalError(error, requestId), cancelled: false };
    }

    // What reaches the client of a customer-supplied base's errors: never the upstream's own words.
    const opaque = candidate.customerSuppliedBase === true;
    let target: UpstreamTarget = candidate;
    let pinned: PinnedHost | undefined;
    if (opaque) {
      const destination = await deps.egress.destination(candidate.baseUrl);
      if (!destination.ok) {
        // Refused before any connection. The reason (what the name resolves to) stays in the log.
        log.warn("egress guard refused a BYOK api_base", { requestId, provider: candidate.providerId, reason: destination.reason });
        lastError = irError("upstream_unavailable", `the api_base of your key (BYOK) for ${candidate.providerId} is not a permitted destination: it must be https and resolve only to public addresses`);
        finish(attempt, "provider_error", lastError);
        continue;
      }
      target = destination.baseUrl === candidate.baseUrl ? candidate : { ...candidate, baseUrl: destination.baseUrl };
      if (destination.host !== undefined && destination.serverName !== undefined) pinned = { host: destination.host, serverName: destination.serverName };
    }

    const calledAt = performance.now();
    const call = await callUpstream({
      target,
      body,
      stream: ir.stream,
      clientHeaders: request.headers,
      requestId,
      timeouts: deps.timeouts,
      clientSignal: request.signal,
      connectCheck: deps.connectCheck,
      graceOver: deps.graceOver,
      pinned,
    });
    attempt.upstreamMs = performance.now() - calledAt;
    if (!call.ok) {
      // A stream's client hanging up (or shutdown) aborts the upstream call: that says nothing about the provider.
      const clientLeft = (ir.stream && request.signal.aborted) || deps.graceOver.aborted;
      if (!clientLeft && call.error.kind === "upstream_unavailable") logUnreachableUpstream(candidate.providerId, target, call.error, requestId);
      finish(attempt, clientLeft ? "aborted" : call.error.kind === "upstream_timeout" ? "timeout" : "provider_error", call.error);
      lastError = call.error;
      continue;
    }

    const { response } = call;
    attempt.status = response.status;
    if (response.status < 200 || response.status >= 300) {
      // An error's body says what went wrong in a few hundred bytes; more is not read (nor
      // kept waiting past the idle deadline): the error is then the status's own.
      const text = await readBodyText(response, deps.timeouts.idleMs, () => call.controller.abort(), ERROR_BODY_MAX_BYTES).catch(() => "");
      attempt.upstreamMs = performance.now() - calledAt;
      call.release();
      let error = codecFor(candidate.protocol).decodeUpstreamError(response.status, parseMaybeJson(text), Object.fromEntries(response.headers));
      if (opaque) error = opaqueUpstreamError(error, response.status);
      const refusedKind = candidate.funding === "byok" ? REFUSED_KEY_KINDS.get(response.status) : undefined;
      if (refusedKind) {
        // The customer's own key was refused: noted on the key, and the next candidate (the
        // platform's key, unless a guardrail requires BYOK) is tried. The provider's message
        // may quote the key, so it is replaced by one that names only the provider.
        deps.byokKeys.recordRefusal(context.principal.accountId, candidate.byokNamespaceId ?? null, candidate.providerId, refusedKind);
        error = irError("upstream_bad_gateway", `${candidate.providerId} refused your own provider key (BYOK) with HTTP ${response.status}; update it with PUT /v1/byok/keys`);
      }
      if (CALLER_ERROR_STATUSES.has(response.status)) {
        finish(attempt, "client_error", error);
        return { ok: false, error, cancelled: false };
      }
      finish(attempt, "provider_error", error);
      lastError = error;
      continue;
    }
    // The provider took the customer's own key.
    if (candidate.funding === "byok") deps.byokKeys.recordUse(context.principal.accountId, candidate.byokNamespaceId ?? null, candidate.providerId);
    const head = { "x-request-id": requestId, "x-switchyard-provider": candidate.providerId };
    const abortUpstream = () => call.controller.abort();

    if (!ir.stream) {
      const answer = await respondJson(
        { translator: deps.translator, idleMs: deps.timeouts.idleMs, maxBytes: deps.maxUpstreamBodyBytes, bytesAbove: deps.answerBytesAbove, answerBytes: deps.answerBytes },
        { response, abortUpstream, upstreamProtocol: candidate.protocol, clientProtocol: protocol, context: codecContext, rewrite: input.responseCheck?.whole, reencode: opaque, waits: attempt, accountId: context.principal.accountId },
      );
      call.release();
      if (!answer.ok && answer.refused) {
        // The upstream served it and the check refused it: no other candidate is asked.
        attempt.signals.push(answer.refused.signals);
        warnings.push(...answer.refused.warnings);
        finish(attempt, "success");
        return { ok: false, error: answer.error, cancelled: false, refused: { attempt, whole: true } };
      }
      if (answer.ok) {
        attempt.signals.push(answer.signals);
        attempt.firstTokenAt = performance.now();
        finish(attempt, "success");
        // What the answer's translation dropped joins the request's warnings, in the header and the record.
        warnings.push(...answer.warnings);
        return { ok: true, kind: "answer", attempt, body: answer.body, headers: { ...head, ...warningsHeader(warnings) } };
      }
      const failure = opaque && answer.error.kind !== "internal" ? opaqueUpstreamError(answer.error) : answer.error;
      finish(attempt, failure.kind === "upstream_timeout" ? "timeout" : "provider_error", failure);
      if (failure.kind === "internal") return { ok: false, error: failure, cancelled: false };
      lastError = failure;
      continue;
    }

    // Only a stream touches `response.body`: asking for it makes Bun build a ReadableStream,
    // which a whole body read with text() does not need (an empty one fails to decode).
    if (!response.body) {
      call.release();
      lastError = irError("upstream_invalid_response", "upstream answered without a body");
      finish(attempt, "provider_error", lastError);
      continue;
    }
    // A stream whose answer is checked is translated (decoded, checked, encoded), the same protocol included.
    const guard = input.responseCheck?.stream();
    const relayed = await relayStream(deps, {
      sessionId: `${requestId}#${attempt.ordinal}`,
      upstreamProtocol: candidate.protocol,
      clientProtocol: protocol,
      passthrough: candidate.protocol === protocol && guard === undefined && !opaque,
      opaqueErrors: opaque,
      guard,
      context: codecContext,
      clientAskedUsage: ir.streamIncludeUsage === true,
      reader: new BodyReader(response.body, deps.timeouts.idleMs, abortUpstream),
      abortUpstream,
      release: call.release,
      // A stream's own warnings come after its head: its observer adds them to the record.
      headers: { ...head, ...warningsHeader(warnings) },
      observer: input.observe(attempt),
      waits: attempt,
    });
    if (relayed.ok) return { ok: true, kind: "stream", response: relayed.response };
    const failure = opaque && !relayed.refused ? opaqueUpstreamError(relayed.error) : relayed.error;
    finish(attempt, request.signal.aborted ? "aborted" : relayed.attemptOutcome, failure);
    // Refused before the first token: charged for what the upstream produced (cut off mid-answer, or read to its end and its usage report).
    if (relayed.refused) return { ok: false, error: failure, cancelled: false, refused: { attempt, whole: relayed.readToEnd === true } };
    lastError = failure;
  }

  const finalError = deps.graceOver.aborted ? shutdownError() : (lastError ?? irError("upstream_unavailable", "no upstream could serve the request"));
  // A stream's client that left before anything was sent: its cancel, not a failure.
  return { ok: false, error: finalError, cancelled: ir.stream && request.signal.aborted };
}

function parseMaybeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** What the gateway changed or dropped in translation, for the client (`x-switchyard-warnings`). */
export function warningsHeader(warnings: IrWarning[]): Record<string, string> {
  if (warnings.length === 0) return {};
  const summary = warnings.map((w) => (w.field ? `${w.code}:${w.field}` : w.code));
  // Field names come from the client's body: anything outside printable ASCII (a NUL, an
  // emoji, a newline) would make the header invalid and the response fail, so it is replaced.
  const value = [...new Set(summary)].join(", ").slice(0, 2000).replace(/[^\x20-\x7e]/g, "?");
  return { "x-switchyard-warnings": value };
}
