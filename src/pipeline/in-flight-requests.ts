import { irError, type IrError } from "../ir";

/** A committed stream that can be ended early; resolves once it is settled. */
export interface InterruptibleStream {
  interrupt(error: IrError): Promise<void>;
}

/**
 * What this instance is still serving when the shutdown grace period runs out. At that
 * limit (`endAll`) every committed stream ends with its protocol's error frame and is
 * settled, and `graceOver` aborts the upstream calls still waiting for an answer, so their
 * requests end with a 503 in their protocol and are settled too: all before the metering
 * buffer's last flush, instead of being reset without an answer or a record.
 */
export class InFlightRequests {
  private readonly streams = new Set<InterruptibleStream>();
  private readonly stopping = new AbortController();

  /** Aborted at the shutdown grace limit: upstream calls stop and no new attempt starts. */
  get graceOver(): AbortSignal {
    return this.stopping.signal;
  }

  addStream(stream: InterruptibleStream): void {
    this.streams.add(stream);
  }

  deleteStream(stream: InterruptibleStream): void {
    this.streams.delete(stream);
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Ends everything in flight; resolves when every open stream is settled. */
  async endAll(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.streams].map((stream) => stream.interrupt(shutdownError())));
  }
}

/** How a request cut by shutdown ends: retryable, on another instance. */
export function shutdownError(): IrError {
  return irError("service_unavailable", "the server is shutting down; retry the request", { retryAfter: 1 });
}
