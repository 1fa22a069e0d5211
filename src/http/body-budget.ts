/**
 * Bodies above this many bytes are large: they wait for room in the budget. Smaller ones
 * (every ordinary request) never wait and are not counted.
 */
export const LARGE_BODY_BYTES = 1024 * 1024;

/** Fewest milliseconds between two collections after large bodies. */
const COLLECTION_INTERVAL_MS = 250;

interface Waiter {
  bytes: number;
  grant: () => void;
}

/** Whose bodies a request's are (an account), for the budget's turns; requests no one named share one. */
const NO_HOLDER = "";
/** Holders whose last grant is remembered before those not waiting are forgotten. */
const MAX_REMEMBERED_HOLDERS = 1024;

/**
 * How many bytes of large request bodies the server holds at once, summed over the
 * requests in progress. A body costs several times its size while it is handled (the text,
 * the parsed value, the IR, the upstream body, their copies in a worker): a few 32 MiB
 * bodies at once took the process past 1.5 GB (test/bench/HISTORY.md). A request whose
 * body does not fit waits its turn before its body is read (the unread upload waits in the
 * connection); a body larger than the whole budget is admitted when nothing else is held,
 * so every body is served eventually.
 *
 * The next turn is the waiting holder's (account's) that was granted room longest ago (or
 * never), each holder's bodies in arrival order: an account that queues a hundred large
 * bodies delays another account's one by one of its own at most, not by a hundred. Nothing
 * overtakes the turn: a body that does not fit yet holds back the others, so a body as large
 * as the budget still gets its turn.
 */
export class BodyBudget {
  private held = 0;
  /** Waiting bodies by holder, in the order holders began to wait. */
  private readonly waiting = new Map<string, Waiter[]>();
  private waiters = 0;
  /** When each holder was last granted room, as a count of grants (a holder not here: never). */
  private readonly lastGranted = new Map<string, number>();
  private grants = 0;

  private lastCollection = Number.NEGATIVE_INFINITY;

  /**
   * `capacity` 0: no budget, nothing ever waits. `collect` runs a full collection of the
   * thread's heap (Bun.gc(true); replaced in tests).
   */
  constructor(
    readonly capacity: number,
    private readonly collect: () => void = () => Bun.gc(true),
  ) {}

  /** Waits until `bytes` fit and it is `holder`'s turn, then counts them as held; resolves at once when they fit now and no one waits. */
  acquire(bytes: number, holder: string = NO_HOLDER): Promise<void> {
    if (this.capacity === 0) return Promise.resolve();
    if (this.waiters === 0 && this.fits(bytes)) {
      this.grant(holder, bytes);
      return Promise.resolve();
    }
    const { promise, resolve } = Promise.withResolvers<void>();
    const queue = this.waiting.get(holder);
    if (queue === undefined) this.waiting.set(holder, [{ bytes, grant: resolve }]);
    else queue.push({ bytes, grant: resolve });
    this.waiters++;
    return promise;
  }

  /**
   * Gives back what an `acquire` of `bytes` took, and admits whoever waits and now fits.
   * `collect` false: the request goes on (its hold resized), so its garbage is not yet there.
   */
  release(bytes: number, collect = true): void {
    if (this.capacity === 0) return;
    this.held = Math.max(0, this.held - bytes);
    if (collect) this.collectGarbage(bytes >= this.capacity / 4);
    for (let holder = this.nextTurn(); holder !== undefined; holder = this.nextTurn()) {
      const queue = this.waiting.get(holder)!;
      const next = queue[0]!;
      if (!this.fits(next.bytes)) return;
      queue.shift();
      if (queue.length === 0) this.waiting.delete(holder);
      this.waiters--;
      this.grant(holder, next.bytes);
      next.grant();
    }
  }

  /** The waiting holder granted room longest ago (never, first); among equals, the one waiting longest. */
  private nextTurn(): string | undefined {
    let turn: string | undefined;
    let turnGranted = Number.POSITIVE_INFINITY;
    for (const holder of this.waiting.keys()) {
      const granted = this.lastGranted.get(holder) ?? 0;
      if (granted < turnGranted) {
        turn = holder;
        turnGranted = granted;
      }
    }
    return turn;
  }

  private grant(holder: string, bytes: number): void {
    this.held += bytes;
    this.lastGranted.set(holder, ++this.grants);
    // Only waiting holders' grants decide turns: the others' are forgotten once they are many.
    if (this.lastGranted.size > MAX_REMEMBERED_HOLDERS) {
      for (const known of this.lastGranted.keys()) if (!this.waiting.has(known)) this.lastGranted.delete(known);
    }
  }

  /** Bytes held and requests waiting (for /metrics and tests). */
  stats(): { heldBytes: number; waiting: number } {
    return { heldBytes: this.held, waiting: this.waiters };
  }

  /**
   * A large body's request leaves garbage several times the body's size (its text, parsed
   * value, IR, upstream body) that the collector would only find once allocation pressure
   * grows the heap further: collected before the next large body is admitted, the next
   * one's copies take its place instead of adding to it. After a body of a quarter of the
   * budget or more, always (its handling cost far more than a collection of the live
   * heap); after smaller ones at most once every COLLECTION_INTERVAL_MS, so a stream of
   * bodies just over the threshold cannot turn the request thread into a collector.
   */
  private collectGarbage(always: boolean): void {
    const now = performance.now();
    if (!always && now - this.lastCollection < COLLECTION_INTERVAL_MS) return;
    this.lastCollection = now;
    this.collect();
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.capacity;
  }
}

/** One request's share of the budget, from its body's read until its answer (RequestHooks.after). */
class RequestShare {
  /** Bytes granted to this request. */
  bytes = 0;
  finished = false;
  /** Whose turn its body waits for (nameBodyHolder); unnamed until its caller is known. */
  holder = NO_HOLDER;

  constructor(readonly budget: BodyBudget) {}

  /** Holds `bytes` for this request (once; a finished request takes nothing). */
  async take(bytes: number): Promise<void> {
    if (this.finished || this.bytes > 0) return;
    await this.budget.acquire(bytes, this.holder);
    if (this.finished) {
      // The request ended (its client left) while it waited: give the room straight back.
      this.budget.release(bytes);
      return;
    }
    this.bytes = bytes;
  }

  /**
   * Once the body is read: holds its weight (body-weight.ts) instead of what was held for
   * it before its read (its declared length, or the limit for a chunked one). Less gives
   * the difference back at once; more waits its turn again, in arrival order, holding
   * nothing meanwhile, so two requests that each want more cannot wait for each other.
   */
  async resize(bytes: number): Promise<void> {
    const held = this.bytes;
    if (this.finished || held === 0 || bytes === held) return;
    if (bytes < held) {
      this.bytes = bytes;
      this.budget.release(held - bytes, false);
      return;
    }
    this.bytes = 0;
    this.budget.release(held, false);
    await this.take(bytes);
  }

  finish(): void {
    this.finished = true;
    if (this.bytes > 0) this.budget.release(this.bytes);
    this.bytes = 0;
  }
}

const shares = new WeakMap<Request, RequestShare>();

/** Puts `request` under `budget`: its large body, when read (request-body.ts), waits for room. */
export function enrolRequest(request: Request, budget: BodyBudget): void {
  if (budget.capacity > 0) shares.set(request, new RequestShare(budget));
}

/** Holds `bytes` of the budget for `request` until it finishes; nothing for small bodies or requests under no budget. */
export function holdBodyBytes(request: Request, bytes: number): Promise<void> | undefined {
  if (bytes <= LARGE_BODY_BYTES) return undefined;
  return shares.get(request)?.take(bytes);
}

/** `request`'s body is `holder`'s (its caller's account): it waits in that holder's turn. Before its body is read. */
export function nameBodyHolder(request: Request, holder: string): void {
  const share = shares.get(request);
  if (share !== undefined) share.holder = holder;
}

/**
 * `request`'s body is read and weighs `weight` (body-weight.ts): its hold becomes that,
 * waiting for room if it grew. Nothing for a request that holds nothing (a small body).
 */
export function weighBody(request: Request, weight: number): Promise<void> | undefined {
  return shares.get(request)?.resize(weight);
}

/** The request has its answer: what its body held goes back to the budget. */
export function finishRequest(request: Request): void {
  const share = shares.get(request);
  if (share === undefined) return;
  shares.delete(request);
  share.finish();
}
