export { serveWorker, type WorkerHandler } from "./serve-worker";
export { WorkerPool, defaultWorkerPoolSize, type WorkerPoolOptions, type WorkerPoolStats } from "./worker-pool";
export { WorkerCrashedError, WorkerHandlerError, WorkerPoolClosedError } from "./worker-errors";
