import { ApiError, errorResponse } from "./errors/api-error";
import { errorInProtocol } from "./pipeline/inference-error";
import { inferenceProtocolOf } from "./inference/inference-paths";
import { requestIdFrom } from "./pipeline/request-id";
import { irError } from "./ir";
import type { Services } from "./services";
import { closingConnection } from "./request-body";

/** What the server does around every request, whichever router serves it (app.ts). */
export interface RequestHooks {
  /** A response that ends the request before its handler runs (body too large), or undefined. */
  before(request: Request, path: string): Response | undefined;
  after(route: string, method: string, status: number, startedAt: number): void;
}

/**
 * What happens around every request, whichever router serves it (Elysia, or Bun's own
 * for the inference paths): the body limit from Content-Length, before anything reads
 * the body (a body without one is held to the same limit while it is read, see
 * request-body.ts), and the HTTP metrics.
 */
export function createRequestHooks(services: Pick<Services, "config" | "metrics">): RequestHooks {
  const { config, metrics } = services;
  return {
    before(request, path) {
      metrics.inFlight.inc();
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length <= 0) return undefined;
      const protocol = inferenceProtocolOf(path);
      const limit = protocol ? config.maxInferenceBodyBytes : config.maxManagementBodyBytes;
      if (length <= limit) return undefined;
      const description = `request body exceeds ${limit} bytes`;
      // An inference client gets the error in its own protocol, like every other inference error.
      if (protocol) return closingConnection(errorInProtocol(protocol, irError("payload_too_large", description), requestIdFrom(request.headers)));
      return closingConnection(errorResponse(new ApiError("payload_too_large", description)));
    },
    after(route, method, status, startedAt) {
      metrics.inFlight.dec();
      metrics.httpRequests.inc([route, method, String(status)]);
      metrics.httpDuration.observe([route, method], (performance.now() - startedAt) / 1000);
    },
  };
}
