import type { IrError } from "../ir";

/** A committed stream that can be ended early; resolves once it is settled. */
export interface InterruptibleStream {
  interrupt(error: IrError): Promise<void>;
}

/**
 * The committed streams this instance is serving. At the shutdown grace limit each one
 * still open is ended with its protocol's error frame and settled before the metering
 * buffer's last flush, instead of being reset without an end.
 */
export class OpenStreams {
  private readonly streams = new Set<InterruptibleStream>();

  add(stream: InterruptibleStream): void {
    this.streams.add(stream);
  }

  delete(stream: InterruptibleStream): void {
    this.streams.delete(stream);
  }

  /** Ends every open stream with `error`; resolves when all are settled. */
  async interruptAll(error: IrError): Promise<void> {
    await Promise.allSettled([...this.streams].map((stream) => stream.interrupt(error)));
  }

  get size(): number {
    return this.streams.size;
  }
}
