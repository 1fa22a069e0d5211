import type { IrError } from "../ir";
import type { AuthDeps } from "../auth/auth-plugin";
import type { FundingSource } from "../funding/funding-source";
import { planAttempts, type PlanDeps } from "../routing/plan-attempts";
import { arrivingRequest } from "../metering/request-outcome";
import { tokensFromChars } from "../metering/estimate-tokens";
import { closingConnection } from "../http/request-body";
import { nameBodyHolder } from "../http/body-budget";
import type { InferenceInput, RequestContext } from "./request-context";
import { requestIdFrom } from "./request-id";
import { errorInProtocol, withChargeNote } from "./inference-error";
import { authenticate } from "./authenticate";
import { decode, type DecodeDeps } from "./decode";
import { fund } from "./fund";
import { admit, type AdmitDeps } from "./admit";
import { resolvePresets, type ResolveDeps } from "./resolve-presets";
import { runAttempts, type AttemptDeps, type AttemptsResult } from "./attempt-loop";
import { attemptObserver } from "./attempt-accounting";
import { jsonResponse } from "./respond-json";
import { responseCheckFor } from "./response-check";
import { RequestSettlement, type RecordDeps } from "./settle";
import { withServerTiming, type OverheadHistogram } from "./server-timing";
import { withRateLimitHeaders } from "./rate-limit-headers";
import type { RateLimitStatus } from "../admission/admission-check";
import type { AttemptRecord } from "../routing/attempt-record";
import type { RequestTracing } from "../observability/request-trace";

/** What each stage is given: only what it uses. */
/** Refusals by admission that are sampled (402 funds or a budget, 403 a guardrail, 429 a rate limit). */
const SAMPLED_AT_ADMISSION: ReadonlySet<number> = new Set([402, 403, 429]);

export interface InferenceDeps {
  auth: AuthDeps;
  decode: DecodeDeps;
  resolve: ResolveDeps;
  plan: PlanDeps;
  funding: FundingSource;
  admission: AdmitDeps;
  attempts: AttemptDeps;
  /** Where records go; undefined when nothing is recorded (METERING=off). */
  records: RecordDeps | undefined;
  /** Where every response's Server-Timing `gateway` part is observed. */
  overhead: OverheadHistogram;
  /** Request traces (docs/operations.md "Traces"); TRACING_OFF unless the OTEL_* variables turn them on. */
  tracing: RequestTracing;
}

/**
 * One inference request, end to end (docs/architecture.md "The pipeline"): authenticate → decode → resolve
 * (routing presets, then endpoints) → fund → admit → attempt (answer or relay) → settle. Each stage returns its result or
 * the error to answer with; from the moment the caller is known, every way out settles
 * the request exactly once (a stream's when it ends, through its observer), and answers only
 * once what admission held for it has ended (RequestSettlement.holdsEnded).
 */
export async function runInference(deps: InferenceDeps, input: InferenceInput): Promise<Response> {
  const { protocol, request } = input;
  const startedAt = performance.now();
  const createdAt = new Date();
  const requestId = requestIdFrom(request.headers);
  // Set once admission has judged the request under a rate limit: every way out from then
  // on carries what the limits have left (a refusal's too), from admission's own reading.
  let rateLimits: RateLimitStatus | undefined;
  // Every way out carries Server-Timing, taken as its head goes out (server-timing.ts).
  const timed = (response: Response, attempts?: readonly AttemptRecord[]) =>
    withServerTiming(deps.overhead, protocol, startedAt, attempts, withRateLimitHeaders(response, rateLimits, protocol));
  const fail = (error: IrError, attempts?: readonly AttemptRecord[]) => timed(errorInProtocol(protocol, error, requestId), attempts);
  const trace = deps.tracing.start(request, protocol, requestId, startedAt);

  const caller = await authenticate(deps.auth, request.headers, requestId);
  trace.stage("authenticate");
  if (!caller.ok) {
    trace.failed(caller.error);
    trace.end();
    return fail(caller.error);
  }
  const principal = caller.principal;
  // A large body waits for room in its account's turn: one account's bodies cannot hold back another's for long.
  nameBodyHolder(request, principal.accountId);
  const context: RequestContext = { requestId, protocol, principal, request };
  const settlement = new RequestSettlement(deps.records, arrivingRequest({ requestId, principal, clientProtocol: protocol, createdAt, startedAt }), trace);
  const outcome = settlement.outcome;
  const failAndSettle = async (error: IrError) => {
    trace.failed(error);
    // Refused before admission attributed it (a body that does not decode, an unknown
    // model): an account-wide credential's record still belongs to the namespace `me`
    // means, so the namespace's request history lists it.
    if (outcome.namespaceId === null) outcome.namespaceId = await deps.resolve.namespaces.namespaceFor(principal).catch(() => null);
    settlement.settle("failed", error.status);
    await settlement.holdsEnded();
    return fail(error, outcome.attempts);
  };
  // Refused before any upstream call, before admission or by it: nothing held or called.
  // Past the account's sample of such records a minute, the refusal is only counted
  // (metering/refusal-sampler.ts), so a client looping on a bad request or hammering its
  // own rate limit does not write a record per attempt. `modelId`: the catalog model the
  // refusal is counted under, null while the model is only the client's text.
  const refuse = async (error: IrError, modelId: string | null = null) => {
    // Before the trace ends with the request (failed() only notes the error; twice is harmless).
    trace.failed(error);
    // Counted under the namespace its record would have had (failAndSettle's).
    if (outcome.namespaceId === null) outcome.namespaceId = await deps.resolve.namespaces.namespaceFor(principal).catch(() => null);
    if (!(await settlement.endUnrecorded(error.status, modelId))) return failAndSettle(error);
    return fail(error, outcome.attempts);
  };

  const decoded = await decode(deps.decode, input, requestId);
  trace.stage("decode");
  if (!decoded.ok) return decoded.closeConnection ? closingConnection(await refuse(decoded.error)) : refuse(decoded.error);
  outcome.warnings.push(...decoded.warnings);
  settlement.describe(decoded.ir);

  const resolved = await resolvePresets(deps.resolve, principal, decoded.ir);
  trace.stage("resolve");
  if (!resolved.ok) return refuse(resolved.error);
  // From here on the request is the one its routing preset (if any) made of it.
  const ir = resolved.ir;
  if (resolved.warning) outcome.warnings.push(resolved.warning);
  if (ir !== decoded.ir) settlement.describe(ir);

  const plan = planAttempts(deps.plan, ir, tokensFromChars(outcome.promptChars), resolved.targets);
  trace.stage("plan");
  if (!plan.ok) return refuse(plan.error);

  const funded = await fund(deps.funding, principal, plan.byModel);
  trace.stage("fund");
  if (!funded.ok) return refuse(funded.error);
  outcome.routingProfile = funded.candidates[0]?.routingProfile;

  const admitted = await admit(deps.admission, { principal, requestId, ir, candidates: funded.candidates, record: outcome });
  trace.stage("admit");
  rateLimits = admitted.ok ? admitted.grant.rateLimits : admitted.refusal?.rateLimits;
  if (!admitted.ok) {
    // A refusal by the account's own means or policies (funds, a budget, a guardrail, a
    // rate limit) is sampled like one before admission; admission unable to decide (503)
    // keeps its record.
    if (!SAMPLED_AT_ADMISSION.has(admitted.error.status)) return failAndSettle(admitted.error);
    const model = outcome.requestedModel;
    return refuse(admitted.error, funded.candidates.some((candidate) => candidate.modelId === model) ? (model ?? null) : null);
  }
  settlement.hold(admitted.grant);
  const candidates = admitted.candidates;

  let result: AttemptsResult;
  try {
    result = await runAttempts(deps.attempts, {
      context,
      ir,
      requestedModel: plan.requestedModel,
      candidates,
      attempts: outcome.attempts,
      warnings: outcome.warnings,
      observe: (attempt) => attemptObserver(attempt, settlement, deps.attempts, request.signal),
      responseCheck: responseCheckFor(admitted.policy, outcome.warnings),
    });
  } catch (error) {
    // A fault of ours (the route answers it with a 500): the request is still settled, so
    // its record is written and what admission holds goes back.
    settlement.settle("failed", 500);
    await settlement.holdsEnded();
    throw error;
  }
  trace.stage("attempt");
  if (!result.ok) {
    if (result.refused) {
      // The upstream served the answer and a response-side check refused it: charged all the same.
      settlement.serveRefused(result.refused.attempt, result.refused.whole);
      trace.failed(result.error);
      const charged = settlement.settle("failed", result.error.status);
      await settlement.holdsEnded();
      return fail(withChargeNote(result.error, charged?.chargeMicroUsd), outcome.attempts);
    }
    if (!result.cancelled) return failAndSettle(result.error);
    // The client left before anything was sent: its cancel, not a failure (499: client closed request).
    settlement.settle("cancelled", 499);
    await settlement.holdsEnded();
    return fail(result.error, outcome.attempts);
  }
  switch (result.kind) {
    case "answer": {
      settlement.serve(result.attempt);
      const settled = settlement.settle("succeeded", 200);
      // The client's next request, sent once it has this answer, must not find its holds.
      await settlement.holdsEnded();
      return timed(jsonResponse(protocol, result.body, settled?.chargeMicroUsd, result.headers), outcome.attempts);
    }
    case "stream":
      // The stream settles through its observer when it ends.
      return timed(result.response, outcome.attempts);
  }
}
