import type { IrRequest } from "../ir";
import { ENDED, type Grant } from "../admission/admission-check";
import type { MeteringSink } from "../metering/metering-rows";
import type { PendingSettlements, SettledRequest } from "../metering/pending-settlements";
import type { ShardedWriteBuffer } from "../db/batch/sharded-write-buffer";
import type { RefusalSampler } from "../metering/refusal-sampler";
import { usedCapabilities, type RequestOutcome, type UsageBounds } from "../metering/request-outcome";
import { promptShape, promptTokenCeiling, type PromptShape } from "../admission/prompt-token-ceiling";
import { outputTokenCeiling } from "../admission/cost-ceiling";
import { settleRequest, type Settlement } from "../metering/settle-request";
import { promptChars } from "../metering/estimate-tokens";
import type { AttemptRecord } from "../routing/attempt-record";
import { log } from "../observability/log";
import { NO_TRACE } from "../observability/tracing";
import type { RequestTrace } from "../observability/request-trace";

/** Where a recorded request's rows go; absent when nothing is recorded (METERING=off). */
export interface RecordDeps {
  sink: MeteringSink;
  writeBuffer: Pick<ShardedWriteBuffer, "onWritten">;
  pending: PendingSettlements;
  /** Which refusals before admission get a record of their own; the rest are counted. */
  refusals: Pick<RefusalSampler, "sample">;
}

/**
 * Stage 8: the request's record, from arrival to its one settlement. Whichever way the
 * request ends — refused, failed, served, cancelled — `settle` runs exactly once: the
 * record, its usage frames and its ledger entry go to the write buffer, and the admission
 * grant is settled with the charge. Its settlement receipt says "pending" until the record
 * is in the database (pending-settlements.ts).
 */
/**
 * The longest an answer waits for its request's holds to be ended in the database: past
 * it (a database that does not answer) the answer goes out and the hold ends when it can
 * (retried by its check, swept as spent if never).
 */
export const HOLDS_END_WAIT_MS = 2_000;

export class RequestSettlement {
  private settled = false;
  private settlement: Settlement | undefined;
  private grant: Grant | undefined;
  /** The grant's settlement or release, once started. */
  private grantEnded: Promise<void> | undefined;

  constructor(
    private readonly deps: RecordDeps | undefined,
    readonly outcome: RequestOutcome,
    /** Ended with the request's settlement (a stream's when the stream ends). */
    private readonly trace: RequestTrace = NO_TRACE,
  ) {
    deps?.pending.add(outcome);
  }

  /** What the decoded body tells the record. */
  describe(ir: IrRequest): void {
    const outcome = this.outcome;
    outcome.streamed = ir.stream;
    outcome.requestedModel = ir.models?.[0] ?? ir.model;
    outcome.promptChars = promptChars(ir);
    outcome.usedCapabilities = usedCapabilities(ir);
    outcome.bounds = usageBoundsOf(ir);
  }

  /** What admission holds for the request until it is settled. */
  hold(grant: Grant): void {
    this.grant = grant;
  }

  /** The attempt whose answer reached the client; `interrupted`: the client left before the end. */
  serve(attempt: AttemptRecord, interrupted = false): void {
    this.outcome.serving = attempt;
    this.outcome.clientDisconnected = interrupted;
  }

  /**
   * An answer the upstream served whole and a response-side check refused: the client gets
   * the refusal, and the request is charged for the answer all the same (its usage report
   * is final).
   */
  serveRefused(attempt: AttemptRecord, whole: boolean): void {
    this.outcome.serving = attempt;
    this.outcome.usageFinal = whole;
  }

  /** Settles the request once, whichever way it ends; later calls return the first settlement. */
  settle(status: RequestOutcome["status"], statusCode: number): Settlement | undefined {
    if (this.settled) return this.settlement;
    this.settled = true;
    const deps = this.deps;
    const outcome = this.outcome;
    outcome.status = status;
    outcome.statusCode = statusCode;
    if (deps === undefined) {
      // Nothing is recorded or charged: the charge of a request that reached an upstream is unknown.
      this.endGrant(null);
      this.trace.end(outcome);
      return undefined;
    }
    const settlement = settleRequest(outcome, deps.sink);
    this.settlement = settlement;
    // An estimate above the ceiling is the estimator's bound meeting admission's; a report
    // above it means a bound in admission is wrong for this upstream. (Several billed
    // attempts can exceed a reservation made for one call: the record says so.)
    if (settlement.uncappedMicroUsd !== undefined && settlement.reported && settlement.unservedCharged === 0) {
      log.warn("charge capped at the admission reservation", { requestId: outcome.requestId, reservedMicroUsd: outcome.reservedMicroUsd, computedMicroUsd: settlement.uncappedMicroUsd });
    }
    whenWritten(deps, outcome.principal.accountId, deps.pending.settle(outcome));
    this.endGrant(settlement.chargeMicroUsd);
    this.trace.end(outcome, settlement);
    return settlement;
  }

  /**
   * A request refused before any upstream call (before admission, or by admission itself:
   * nothing held, nothing charged) past its account's sample of such records
   * (RefusalSampler): ended here with no rows, counted by the sampler instead, and true.
   * False while the sample has room (and without metering): the caller settles it with
   * its record as usual. `modelId`: the catalog model the refusal names, null when the
   * model is only the client's text (before routing found it).
   */
  async endUnrecorded(statusCode: number, modelId: string | null): Promise<boolean> {
    const deps = this.deps;
    const outcome = this.outcome;
    if (this.settled || deps === undefined || outcome.attempts.length > 0 || this.grant !== undefined) return false;
    const principal = outcome.principal;
    const sampled = await deps.refusals.sample({
      accountId: principal.accountId,
      statusCode,
      namespaceId: outcome.namespaceId,
      apiKeyId: principal.kind === "api_key" ? principal.id : null,
      modelId,
    });
    if (sampled) return false;
    this.settled = true;
    outcome.status = "failed";
    outcome.statusCode = statusCode;
    deps.pending.done(outcome);
    this.trace.end(outcome);
    return true;
  }

  /**
   * Resolves once what admission held for the settled request is settled or released
   * where every instance's admission reads it (a budget's hold, a rate limit's withdrawn
   * admission, a low wallet's unspent reservation), or after HOLDS_END_WAIT_MS. The answer
   * — a whole body, a stream's terminal event, an error — goes out after it: a client that
   * sends its next request once it has the answer must not find this one still holding
   * room (issue: sequential clients refused one request early by their own last request).
   */
  async holdsEnded(): Promise<void> {
    const ended = this.grantEnded;
    if (ended === undefined) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        log.warn("an answer went out before its request's admission holds were ended", { requestId: this.outcome.requestId, waitedMs: HOLDS_END_WAIT_MS });
        resolve();
      }, HOLDS_END_WAIT_MS);
    });
    try {
      await Promise.race([ended, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Ends what admission holds, once: settled with the charge when an upstream was called
   * (a client that left, an answer refused by a response-side check included), released
   * when none was (nothing was spent and no request was made).
   */
  private endGrant(chargeMicroUsd: number | null): void {
    const grant = this.grant;
    if (grant === undefined) return;
    this.grant = undefined;
    const ended = this.outcome.attempts.length > 0 ? grant.settle({ chargeMicroUsd }) : grant.release();
    // Ended in memory (a leased hot key, a wallet chunk): nothing to wait for, no timer to arm.
    if (ended === ENDED) return;
    this.grantEnded = ended.catch((error: unknown) => log.error("admission grant could not be ended", { requestId: this.outcome.requestId, error: error instanceof Error ? error.message : String(error) }));
  }
}

/**
 * Upper bounds for an estimate of usage the upstream never reported: admission's prompt
 * ceiling and output ceiling for the candidate (src/admission/prompt-token-ceiling.ts,
 * cost-ceiling.ts), the prompt's shape measured once, and only when an estimate needs it.
 */
function usageBoundsOf(ir: IrRequest): UsageBounds {
  let shape: PromptShape | undefined;
  return {
    promptTokens: (candidate) => promptTokenCeiling((shape ??= promptShape(ir)), candidate.limits),
    completionTokens: (candidate) => outputTokenCeiling(ir, candidate),
  };
}

/**
 * Ends a settled request's pending entry once its rows are written. A function of its
 * own so that the callback, which lives as long as the rows wait, captures the entry and
 * nothing of the request.
 */
function whenWritten(deps: RecordDeps, accountId: string, settled: SettledRequest): void {
  deps.writeBuffer.onWritten(accountId, () => deps.pending.done(settled));
}
