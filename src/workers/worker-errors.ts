/**
 * The three ways a WorkerPool call can fail. Callers tell them apart by `name`
 * (stable across module copies, unlike `instanceof`), e.g. the inference pipeline
 * answers "please retry" for a WorkerCrashedError.
 */

/**
 * The worker serving the call died (uncaught error, process.exit, failed to load), or
 * the call's affinity key was pinned to a worker that died: that session's state is
 * gone, and the key keeps failing with this error until `release(key)` is called.
 */
export class WorkerCrashedError extends Error {
  override readonly name = "WorkerCrashedError";
}

/** The handler threw (or rejected) for this call; the message is the handler's. The worker lives on. */
export class WorkerHandlerError extends Error {
  override readonly name = "WorkerHandlerError";
}

/** The pool was closed before the call could complete, or the call came after close(). */
export class WorkerPoolClosedError extends Error {
  override readonly name = "WorkerPoolClosedError";
}
