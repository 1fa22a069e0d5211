import { READY_SIGNAL, besideOf, hasValidBytesBeside, isCallMessage, withBeside, type Beside, type ReplyMessage, type WorkerAnswer } from "./wire-format";

/**
 * A worker's whole job: one string in (with what came beside the call, if anything), one
 * string out (or an answer with what goes beside it). May be async.
 */
export type WorkerHandler = (payload: string, beside?: Beside) => string | WorkerAnswer | Promise<string | WorkerAnswer>;

/** The slice of a DedicatedWorkerGlobalScope this module uses (bun-types declares no `self`). */
interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: ReplyMessage | string, transfer?: ArrayBuffer[]): void;
}

let serving = false;

/**
 * Serves `handler` from the calling worker thread: runs it on each call's payload and
 * posts the reply (see wire-format.ts). A handler that throws or rejects answers that
 * one call with its error message; the worker keeps serving. Call it once, from the
 * worker's entry module.
 *
 * Bun drops messages that reach a worker before it has a message handler, which
 * happens when the entry module or one of its imports awaits at top level. The pool
 * therefore holds calls until the ready signal posted here, so serving after a
 * top-level `await` loses nothing.
 */
export function serveWorker(handler: WorkerHandler): void {
  if (Bun.isMainThread) throw new Error("serveWorker() must be called inside a worker thread");
  if (serving) throw new Error("serveWorker() was already called in this worker");
  serving = true;

  const scope = globalThis as unknown as WorkerScope;
  const answerError = (id: number, error: unknown) => {
    scope.postMessage({ id, ok: false, body: describeError(error) });
  };
  const answer = (id: number, charsIn: number, result: unknown) => {
    if (typeof result === "string") result = { body: result };
    if (!isAnswer(result)) return answerError(id, new TypeError(`worker handler returned ${typeof result}, expected a string or { body, texts?, chunks?, blob? }`));
    const { message: reply, transfer } = withBeside({ id, ok: true, body: result.body } as ReplyMessage, result);
    if (transfer.length === 0) scope.postMessage(reply);
    else scope.postMessage(reply, transfer);
    collectAfterLargeCall(charsIn + result.body.length + besideSize(result));
  };

  scope.onmessage = (event: MessageEvent) => {
    const message: unknown = event.data;
    if (!isCallMessage(message)) return;
    const id = message.id;
    const beside = besideOf(message);
    const charsIn = message.payload.length + besideSize(beside);
    let result: unknown;
    try {
      result = handler(message.payload, beside);
    } catch (error) {
      answerError(id, error);
      return;
    }
    if (isPromiseLike(result)) result.then((value) => answer(id, charsIn, value), (error: unknown) => answerError(id, error));
    else answer(id, charsIn, result);
  };
  scope.postMessage(READY_SIGNAL);
}

function isAnswer(value: unknown): value is WorkerAnswer {
  if (typeof value !== "object" || value === null) return false;
  const fields = value as Record<string, unknown>;
  if (typeof fields.body !== "string") return false;
  if (fields.texts !== undefined && !(Array.isArray(fields.texts) && fields.texts.every((text) => typeof text === "string"))) return false;
  return hasValidBytesBeside(fields);
}

/** How large what came or goes beside is, in characters or bytes (both count toward a large call). */
function besideSize(beside: Beside | undefined): number {
  if (beside === undefined) return 0;
  let total = beside.blob?.size ?? 0;
  if (beside.texts !== undefined) for (const text of beside.texts) total += text.length;
  if (beside.chunks !== undefined) for (const chunk of beside.chunks) total += chunk.byteLength;
  return total;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return "worker handler threw a value that cannot be converted to a string";
  }
}

/**
 * Calls whose payload and answer together reach this many characters (a body of megabytes
 * translated) are followed by a full collection of the worker's heap.
 */
const LARGE_CALL_CHARS = 1 << 20;

/**
 * A worker's heap is its own: the copies of a large body it parsed and wrote are garbage
 * once the answer is posted, but an idle worker allocates nothing more, so its collector
 * would not run and the process kept them (hundreds of MB after a few 32 MiB bodies,
 * test/bench/HISTORY.md). A full collection of a worker's small live heap takes a few ms,
 * against the tens of ms the large call itself took.
 */
function collectAfterLargeCall(chars: number): void {
  if (chars >= LARGE_CALL_CHARS) Bun.gc(true);
}
