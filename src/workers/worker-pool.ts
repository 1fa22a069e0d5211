import { READY_SIGNAL, besideOf, isReplyMessage, withBeside, type Beside, type CallMessage, type WorkerAnswer } from "./wire-format";
import { WorkerCrashedError, WorkerHandlerError, WorkerPoolClosedError } from "./worker-errors";

export interface WorkerPoolOptions {
  /**
   * The worker's entry module; it must call serveWorker(). Prefer
   * `new URL("../../workers/x.worker.ts", import.meta.url)`: Bun resolves a bare string
   * against the project root, not against the caller.
   */
  workerUrl: URL | string;
  /** Worker threads kept running. Default: defaultWorkerPoolSize(). */
  size?: number;
  /** Prefix of the worker names seen in errors and debuggers. Default "worker". */
  name?: string;
}

export interface WorkerPoolStats {
  /** Configured number of workers (the pool replaces dead ones to keep it). */
  size: number;
  /** Workers with at least one call in flight. */
  busy: number;
  /** Calls in flight over all workers. */
  pending: number;
  /** Workers started to replace dead ones since the pool was created. */
  restarts: number;
  /** Affinity keys currently pinned (including keys pinned to a dead worker). */
  pinned: number;
}

/**
 * More workers than this rarely pays: every reply is handled on the one main thread,
 * which becomes the bottleneck long before eight workers are saturated, and each
 * worker costs its own JavaScript heap.
 */
const MAX_DEFAULT_SIZE = 8;
/** Backoff between restarts of a worker that keeps dying before it is ready (a broken script). */
const RESTART_BACKOFF_BASE_MS = 100;
const RESTART_BACKOFF_MAX_MS = 5_000;
/**
 * A worker is ref'd while it owes answers. Toggling ref()/unref() around every call
 * measured about 2 µs of a 22 µs round trip, so an idle worker is unref'd by a sweep
 * this long after a reply left it idle: at worst the process outlives its last call by
 * this much.
 */
const UNREF_DELAY_MS = 50;
/** How long close() waits for terminated workers to report their exit. */
const CLOSE_WAIT_MS = 1_000;

/** One core for the main thread, the rest for workers; at least 1, at most 8. */
export function defaultWorkerPoolSize(): number {
  const cores = navigator.hardwareConcurrency || 2;
  return Math.min(MAX_DEFAULT_SIZE, Math.max(1, cores - 1));
}

type PendingCall = PromiseWithResolvers<WorkerAnswer>;

/** A call as posted: the message and the buffers it moves (its chunks'). */
interface Outgoing {
  message: CallMessage;
  transfer: ArrayBuffer[];
}

/** One worker thread of the pool and the calls it owes answers to. */
class PoolMember {
  /** In-flight calls by id; its size is this worker's load. */
  readonly calls = new Map<number, PendingCall>();
  /** Calls held until the worker's handler is installed; undefined once it is. */
  backlog: Outgoing[] | undefined = [];
  /** Affinity keys pinned to this worker (a tie-breaker when placing new sessions). */
  pinned = 0;
  /** Whether the worker currently keeps the process alive. */
  referenced = false;
  dead = false;
  readonly started = Promise.withResolvers<void>();

  constructor(
    readonly worker: Worker,
    readonly name: string,
  ) {
    // Nobody may be waiting on ready(); a failed start must not become an unhandled rejection.
    this.started.promise.catch(ignore);
  }
}

/**
 * A fixed-size pool of Bun worker threads answering string calls (see serveWorker).
 *
 * - Dispatch: the worker with the fewest calls in flight (ties: fewer pinned keys).
 * - Affinity: calls with the same `affinityKey` go to the worker that served the key
 *   first, so per-session state can live in one worker; `release(key)` unpins it.
 * - Death: when a worker dies (uncaught error, process.exit, failed load) its pending
 *   calls reject with WorkerCrashedError and a replacement starts, so the pool keeps
 *   its size. Keys pinned to the dead worker stay pinned to the corpse: every later call
 *   with such a key rejects with WorkerCrashedError, because the session state it relies
 *   on is gone, until `release(key)` is called. A worker that hangs is not detected.
 * - Lifetime: an idle pool does not keep the process alive (at most UNREF_DELAY_MS
 *   after its last answer); a worker that owes an answer does, so a script awaiting a
 *   call is not cut short.
 */
export class WorkerPool {
  readonly size: number;
  readonly name: string;
  private readonly workerUrl: URL | string;
  /** Live workers only (starting or ready); dead ones are removed at once. */
  private members: PoolMember[] = [];
  private readonly pins = new Map<string, PoolMember>();
  private nextCallId = 0;
  private nextSerial = 0;
  private restarts = 0;
  /** Consecutive deaths before the ready signal: drives the restart backoff. */
  private startupFailures = 0;
  private readonly restartTimers = new Set<Timer>();
  private unrefSweep: Timer | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(options: WorkerPoolOptions) {
    const size = options.size ?? defaultWorkerPoolSize();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`worker pool size must be a positive integer, got ${size}`);
    this.size = size;
    this.name = options.name ?? "worker";
    this.workerUrl = options.workerUrl;
    for (let index = 0; index < size; index++) this.startMember();
  }

  /** Sends `payload` to a worker and resolves with its handler's answer. */
  async call(payload: string, affinityKey?: string): Promise<string> {
    return (await this.exchange(payload, undefined, affinityKey)).body;
  }

  /**
   * Sends `payload`, and what goes `beside` it (large strings, chunks of bytes, a blob: never
   * escaped into the payload, wire-format.ts), to a worker; resolves with its handler's
   * answer and what came beside that, if anything.
   */
  exchange(payload: string, beside: Beside | undefined, affinityKey?: string): Promise<WorkerAnswer> {
    if (this.closed) return Promise.reject(new WorkerPoolClosedError(`worker pool "${this.name}" is closed`));
    let member: PoolMember | undefined;
    if (affinityKey === undefined) {
      member = this.leastLoaded();
    } else {
      member = this.pins.get(affinityKey);
      if (member === undefined) {
        member = this.leastLoaded();
        if (member !== undefined) {
          this.pins.set(affinityKey, member);
          member.pinned++;
        }
      } else if (member.dead) {
        return Promise.reject(
          new WorkerCrashedError(`worker "${member.name}" holding affinity key "${affinityKey}" died; the key's state is lost until it is released`),
        );
      }
    }
    if (member === undefined) {
      return Promise.reject(new WorkerCrashedError(`worker pool "${this.name}" has no running worker: its workers fail to start`));
    }

    const callId = this.nextCallId++;
    const call: PendingCall = Promise.withResolvers<WorkerAnswer>();
    if (!member.referenced) {
      member.referenced = true;
      member.worker.ref();
    }
    member.calls.set(callId, call);
    // With nothing beside, the message stays { id, payload }: flat and primitive-valued.
    const outgoing: Outgoing = withBeside({ id: callId, payload }, beside);
    if (member.backlog === undefined) this.post(member, outgoing);
    else member.backlog.push(outgoing);
    return call.promise;
  }

  /** Calls in flight on the worker `affinityKey` is pinned to; undefined when it is pinned to none, or to one that died. */
  pinnedLoad(affinityKey: string): number | undefined {
    const member = this.pins.get(affinityKey);
    return member === undefined || member.dead ? undefined : member.calls.size;
  }

  /** Unpins `affinityKey`; its next call is placed like a new session. Unknown keys are ignored. */
  release(affinityKey: string): void {
    const member = this.pins.get(affinityKey);
    if (member === undefined) return;
    this.pins.delete(affinityKey);
    member.pinned--;
  }

  /**
   * Resolves once every worker has installed its handler (for benchmarks and startup
   * checks); rejects with WorkerCrashedError if one dies first, or if some workers are
   * waiting to be restarted after failing to start.
   */
  async ready(): Promise<void> {
    for (;;) {
      if (this.closed) throw new WorkerPoolClosedError(`worker pool "${this.name}" is closed`);
      if (this.members.length < this.size) {
        throw new WorkerCrashedError(`worker pool "${this.name}" runs ${this.members.length} of ${this.size} workers: the others failed to start`);
      }
      const starting = this.members.filter((member) => member.backlog !== undefined);
      if (starting.length === 0) return;
      await Promise.all(starting.map((member) => member.started.promise));
    }
  }

  stats(): WorkerPoolStats {
    let busy = 0;
    let pending = 0;
    for (const member of this.members) {
      const load = member.calls.size;
      if (load > 0) busy++;
      pending += load;
    }
    return { size: this.size, busy, pending, restarts: this.restarts, pinned: this.pins.size };
  }

  /** Terminates every worker; pending and later calls reject with WorkerPoolClosedError. Idempotent. */
  close(): Promise<void> {
    if (this.closing !== undefined) return this.closing;
    this.closed = true;
    for (const timer of this.restartTimers) clearTimeout(timer);
    this.restartTimers.clear();
    clearTimeout(this.unrefSweep);
    this.pins.clear();
    const members = this.members;
    this.members = [];
    this.closing = Promise.all(members.map((member) => this.shutDown(member))).then(ignore);
    return this.closing;
  }

  private startMember(): void {
    const name = `${this.name}#${this.nextSerial++}`;
    const worker = new Worker(this.workerUrl, { type: "module", name });
    worker.unref();
    const member = new PoolMember(worker, name);
    worker.onmessage = (event: MessageEvent) => this.receive(member, event.data);
    worker.addEventListener("error", (event) => this.bury(member, `crashed: ${summarizeWorkerError(event)}`));
    worker.addEventListener("close", (event) => this.bury(member, `exited with code ${event.code}`));
    this.members.push(member);
  }

  private receive(member: PoolMember, message: unknown): void {
    if (member.backlog !== undefined) {
      if (message === READY_SIGNAL) this.markReady(member);
      return;
    }
    if (!isReplyMessage(message)) return;
    const call = member.calls.get(message.id);
    if (call === undefined) return;
    member.calls.delete(message.id);
    if (member.calls.size === 0 && this.unrefSweep === undefined) this.scheduleUnrefSweep();
    if (!message.ok) {
      call.reject(new WorkerHandlerError(message.body));
      return;
    }
    const came = besideOf(message);
    call.resolve(came === undefined ? { body: message.body } : { body: message.body, ...came });
  }

  private markReady(member: PoolMember): void {
    const backlog = member.backlog ?? [];
    member.backlog = undefined;
    this.startupFailures = 0;
    member.started.resolve();
    for (const message of backlog) {
      if (member.dead) return;
      this.post(member, message);
    }
  }

  private post(member: PoolMember, outgoing: Outgoing): void {
    try {
      if (outgoing.transfer.length === 0) member.worker.postMessage(outgoing.message);
      else member.worker.postMessage(outgoing.message, outgoing.transfer);
    } catch (error) {
      this.bury(member, `refused a message: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private scheduleUnrefSweep(): void {
    this.unrefSweep = setTimeout(() => {
      this.unrefSweep = undefined;
      for (const member of this.members) {
        if (member.referenced && member.calls.size === 0) {
          member.referenced = false;
          member.worker.unref();
        }
      }
    }, UNREF_DELAY_MS);
    this.unrefSweep.unref();
  }

  private leastLoaded(): PoolMember | undefined {
    const members = this.members;
    let best: PoolMember | undefined;
    for (let index = 0; index < members.length; index++) {
      const member = members[index]!;
      if (best === undefined) {
        best = member;
        continue;
      }
      const load = member.calls.size;
      const bestLoad = best.calls.size;
      if (load < bestLoad || (load === bestLoad && member.pinned < best.pinned)) best = member;
    }
    return best;
  }

  /** Handles a death once (Bun reports an uncaught error as "error", then "close"). */
  private bury(member: PoolMember, reason: string): void {
    if (member.dead) return;
    member.dead = true;
    const index = this.members.indexOf(member);
    if (index >= 0) this.members.splice(index, 1);
    member.worker.onmessage = null;
    // After an "error" the thread is on its way out; make sure it goes.
    member.worker.terminate();

    const failedAtStartup = member.backlog !== undefined;
    member.backlog = undefined;
    const message = `worker "${member.name}" ${reason}`;
    for (const call of member.calls.values()) call.reject(new WorkerCrashedError(message));
    member.calls.clear();
    member.started.reject(new WorkerCrashedError(message));

    if (this.closed) return;
    this.startupFailures = failedAtStartup ? this.startupFailures + 1 : 0;
    this.scheduleReplacement();
  }

  private scheduleReplacement(): void {
    if (this.startupFailures === 0) {
      this.replace();
      return;
    }
    const delay = Math.min(RESTART_BACKOFF_BASE_MS * 2 ** (this.startupFailures - 1), RESTART_BACKOFF_MAX_MS);
    const timer = setTimeout(() => {
      this.restartTimers.delete(timer);
      this.replace();
    }, delay);
    timer.unref();
    this.restartTimers.add(timer);
  }

  private replace(): void {
    if (this.closed) return;
    this.restarts++;
    try {
      this.startMember();
    } catch {
      this.startupFailures++;
      this.scheduleReplacement();
    }
  }

  private shutDown(member: PoolMember): Promise<void> {
    member.dead = true;
    member.backlog = undefined;
    const message = `worker pool "${this.name}" was closed`;
    for (const call of member.calls.values()) call.reject(new WorkerPoolClosedError(message));
    member.calls.clear();
    member.started.reject(new WorkerPoolClosedError(message));
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      timer.unref();
      member.worker.addEventListener(
        "close",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
      member.worker.terminate();
    });
  }
}

/** Bun puts a code frame around the error line; keep the line that names the error. */
function summarizeWorkerError(event: ErrorEvent): string {
  const lines = (event.message ?? "").split("\n");
  let first: string | undefined;
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed === "") continue;
    first ??= trimmed;
    if (trimmed.startsWith("error: ")) return trimmed.slice("error: ".length);
    if (/^\w*Error: /.test(trimmed)) return trimmed;
  }
  return first ?? "unknown error";
}

function ignore(): void {}
