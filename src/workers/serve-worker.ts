import { READY_SIGNAL, isCallMessage, type ReplyMessage } from "./wire-format";

/** A worker's whole job: one string in, one string out. May be async. */
export type WorkerHandler = (payload: string) => string | Promise<string>;

/** The slice of a DedicatedWorkerGlobalScope this module uses (bun-types declares no `self`). */
interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: ReplyMessage | string): void;
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
  const answer = (id: number, result: unknown) => {
    if (typeof result === "string") scope.postMessage({ id, ok: true, body: result });
    else answerError(id, new TypeError(`worker handler returned ${typeof result}, expected a string`));
  };

  scope.onmessage = (event: MessageEvent) => {
    const message: unknown = event.data;
    if (!isCallMessage(message)) return;
    const id = message.id;
    let result: string | Promise<string>;
    try {
      result = handler(message.payload);
    } catch (error) {
      answerError(id, error);
      return;
    }
    if (typeof result === "string") scope.postMessage({ id, ok: true, body: result });
    else if (isPromiseLike(result)) result.then((value) => answer(id, value), (error: unknown) => answerError(id, error));
    else answer(id, result);
  };
  scope.postMessage(READY_SIGNAL);
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
