import type { RequestOutcome } from "./request-outcome";

/** What a pending receipt shows of a request still being served or not yet written. */
export interface PendingRequest {
  namespaceId: string | null;
  modelId: string | null;
  providerId: string | null;
}

/**
 * A settled request waiting for its rows to be written: what its receipt shows, and no
 * more. Settled requests wait a flush interval or longer (a database that lags holds
 * thousands), so the entry must not keep the request's outcome, its attempts and
 * everything they reference alive that long: kept until the write, they survive young
 * collections and grow the heap with the write buffer's backlog (test/bench/HISTORY.md,
 * the 2026-11-29 09:52–11:05 entry).
 */
export class SettledRequest implements PendingRequest {
  constructor(
    // Not the map's key itself: a second copy of it would be one more string a request
    // keeps; these two are kept by its rows anyway.
    readonly accountId: string,
    readonly requestId: string,
    readonly namespaceId: string | null,
    readonly modelId: string | null,
    readonly providerId: string | null,
  ) {}
}

/**
 * Requests this instance has admitted whose record is not in the database yet: still
 * being served, or settled and waiting for the write buffer's next flush. The settlement
 * endpoint answers `state: "pending"` for them instead of a 404. Only the
 * serving instance knows a request before its record lands; another instance answers 404
 * for those few milliseconds. Keyed by account and the client-visible request id; a
 * reused id counts its requests, and the newest one is what a receipt describes.
 */
export class PendingSettlements {
  /** In progress: the outcome itself (it still changes); settled: a SettledRequest. */
  private readonly byKey = new Map<string, Array<RequestOutcome | SettledRequest>>();

  /**
   * A bound for the case that should not happen (a request that throws past its own
   * settlement and is never `done`): beyond this many ids the oldest are forgotten.
   */
  constructor(private readonly maxIds = 100_000) {}

  private static key(accountId: string, requestId: string): string {
    return `${accountId}\u0000${requestId}`;
  }

  /** From admission until `done` (the record committed). */
  add(outcome: RequestOutcome): void {
    const key = PendingSettlements.key(outcome.principal.accountId, outcome.requestId);
    const list = this.byKey.get(key);
    if (list === undefined) this.byKey.set(key, [outcome]);
    else list.push(outcome);
    if (this.byKey.size > this.maxIds) this.byKey.delete(this.byKey.keys().next().value!);
  }

  /**
   * The request is settled and its rows are in the write buffer: from now on it is
   * described by what its receipt shows, not by its outcome. Pass the result to `done`
   * once the rows are written.
   */
  settle(outcome: RequestOutcome): SettledRequest {
    const shown = describe(outcome);
    const settled = new SettledRequest(outcome.principal.accountId, outcome.requestId, shown.namespaceId, shown.modelId, shown.providerId);
    const list = this.byKey.get(PendingSettlements.key(outcome.principal.accountId, outcome.requestId));
    const index = list === undefined ? -1 : list.indexOf(outcome);
    if (index !== -1) list![index] = settled;
    return settled;
  }

  /** The request's rows are written (a SettledRequest), or it ends with none (its outcome). */
  done(entry: RequestOutcome | SettledRequest): void {
    const key = entry instanceof SettledRequest ? PendingSettlements.key(entry.accountId, entry.requestId) : PendingSettlements.key(entry.principal.accountId, entry.requestId);
    const list = this.byKey.get(key);
    if (list === undefined) return;
    const index = list.indexOf(entry);
    if (index !== -1) list.splice(index, 1);
    if (list.length === 0) this.byKey.delete(key);
  }

  /** The newest pending request with this id in the account (and namespace, when given). */
  find(accountId: string, requestId: string, namespaceId: string | null): PendingRequest | undefined {
    const list = this.byKey.get(PendingSettlements.key(accountId, requestId));
    if (list === undefined) return undefined;
    for (let i = list.length - 1; i >= 0; i--) {
      const entry = list[i]!;
      if (namespaceId !== null && entry.namespaceId !== namespaceId) continue;
      return entry instanceof SettledRequest ? { namespaceId: entry.namespaceId, modelId: entry.modelId, providerId: entry.providerId } : describe(entry);
    }
    return undefined;
  }

  get size(): number {
    return this.byKey.size;
  }
}

/** What a receipt shows of a request in progress. */
function describe(outcome: RequestOutcome): PendingRequest {
  // The attempt serving it, or the one being tried now.
  const candidate = (outcome.serving ?? outcome.attempts.at(-1))?.candidate;
  return {
    namespaceId: outcome.namespaceId,
    modelId: candidate?.modelId ?? outcome.requestedModel ?? null,
    providerId: candidate?.providerId ?? null,
  };
}
