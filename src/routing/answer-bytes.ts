/**
 * An upstream's whole answers over this size count against their account's room: smaller
 * ones (every ordinary answer, a few KB) never do.
 */
export const LARGE_ANSWER_BYTES = 1024 * 1024;

/**
 * How many bytes of large whole answers each account's requests may have in flight on this
 * process (UPSTREAM_ANSWER_BYTES_PER_ACCOUNT). Any customer can point its own key at an
 * upstream it runs (BYOK `api_base`), and each of its answers may be as large as
 * MAX_UPSTREAM_BODY_BYTES. The runtime reads a response's body into memory whether or not it
 * is read (test/bench/HISTORY.md, 2026-11-29 16:48), so waiting is no bound: an answer that
 * would take its account past the room is refused at its head (its declared length) or
 * while it is read (one without a length), and the upstream call aborted. Memory is this
 * process's, so the count is too.
 */
export class AnswerBytes {
  private readonly held = new Map<string, number>();
  /** Every account's held bytes, summed (/metrics). */
  private total = 0;

  /** `perAccount` 0: no bound. */
  constructor(readonly perAccount: number) {}

  /** Counts `bytes` more for `account` if they fit its room; false (nothing counted) if not. */
  reserve(account: string, bytes: number): boolean {
    if (this.perAccount === 0) return true;
    const held = this.held.get(account) ?? 0;
    if (held + bytes > this.perAccount) return false;
    this.held.set(account, held + bytes);
    this.total += bytes;
    return true;
  }

  /** Gives back what reserve counted. */
  release(account: string, bytes: number): void {
    if (this.perAccount === 0 || bytes === 0) return;
    const held = this.held.get(account) ?? 0;
    this.total -= Math.min(held, bytes);
    const left = held - bytes;
    if (left > 0) this.held.set(account, left);
    else this.held.delete(account);
  }

  /** Bytes held for all accounts together (switchyard_large_answer_bytes). */
  heldTotal(): number {
    return this.total;
  }

  /** Bytes held for `account` (tests). */
  heldFor(account: string): number {
    return this.held.get(account) ?? 0;
  }
}

/** One answer's reservation: grows as its body is read, given back once the answer is made. */
export class AnswerReservation {
  private bytes = 0;

  constructor(
    private readonly budget: AnswerBytes,
    private readonly account: string,
  ) {}

  /** The answer is (or has grown to) `total` bytes: counts the difference once it is large. False when the account has no room for it. */
  grow(total: number): boolean {
    if (total <= LARGE_ANSWER_BYTES || total <= this.bytes) return true;
    if (!this.budget.reserve(this.account, total - this.bytes)) return false;
    this.bytes = total;
    return true;
  }

  release(): void {
    this.budget.release(this.account, this.bytes);
    this.bytes = 0;
  }
}
