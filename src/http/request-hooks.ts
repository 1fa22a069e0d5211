import type { Metrics } from "../observability/metrics";
import { closingConnection } from "./request-body";
import { BodyBudget, enrolRequest, finishRequest } from "./body-budget";
import type { IdleCollector } from "./idle-collector";

/** What the server does around every request, whichever router serves it (app.ts, or Bun's own for the inference paths). */
export interface RequestHooks {
  /** A response that ends the request before its handler runs (body too large), or undefined. */
  before(request: Request, path: string): Response | undefined;
  /** The request has its answer (a stream: its head): what its body held goes back to the budget. */
  after(route: string, method: string, status: number, startedAt: number, request: Request): void;
}

/** A route's body limit, and its answer to a body past it, in the route's own error shape. */
export interface BodyLimit {
  readonly bytes: number;
  refuse(request: Request, description: string): Response;
}

/**
 * What happens around every request, whichever router serves it (Elysia, or Bun's own
 * for the inference paths): the body limit from Content-Length, before anything reads
 * the body (a body without one is held to the same limit while it is read, see
 * request-body.ts), the budget of large bodies held at once (body-budget.ts: a request
 * holds its share from its body's read until its answer), the collection once the server
 * falls quiet (idle-collector.ts), and the HTTP metrics. The routes' limits come from `bodyLimitOf`
 * (src/inference/body-limits.ts), so this layer knows no route.
 */
export function createRequestHooks(
  metrics: Pick<Metrics, "inFlight" | "httpRequests" | "httpDuration">,
  bodyLimitOf: (path: string) => BodyLimit,
  bodyBudget: BodyBudget = new BodyBudget(0),
  idleCollector?: IdleCollector,
): RequestHooks {
  return {
    before(request, path) {
      metrics.inFlight.inc();
      idleCollector?.requestStarted();
      enrolRequest(request, bodyBudget);
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length <= 0) return undefined;
      const limit = bodyLimitOf(path);
      if (length <= limit.bytes) return undefined;
      return closingConnection(limit.refuse(request, `request body exceeds ${limit.bytes} bytes`));
    },
    after(route, method, status, startedAt, request) {
      finishRequest(request);
      idleCollector?.requestEnded();
      metrics.inFlight.dec();
      metrics.httpRequests.inc([route, method, String(status)]);
      metrics.httpDuration.observe([route, method], (performance.now() - startedAt) / 1000);
    },
  };
}
