import { irError, type IrError } from "../ir";

/**
 * Reads an upstream body chunk by chunk with an idle deadline between chunks, so a
 * stalled upstream turns into a timeout instead of a hang.
 */
export class BodyReader {
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  private readonly decoder = new TextDecoder();

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly idleTimeoutMs: number,
    private readonly abort: (reason: IrError) => void,
  ) {
    this.reader = body.getReader();
  }

  /** Next decoded text chunk, or undefined at the end. Throws an IrError on timeout or network failure. */
  async next(): Promise<string | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Aborting may reject the pending read before the timeout promise does; the
    // flag makes sure the caller still learns it was a timeout.
    let timedOut: IrError | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = irError("upstream_timeout", `upstream sent nothing for ${this.idleTimeoutMs} ms`);
        reject(timedOut);
        this.abort(timedOut);
      }, this.idleTimeoutMs);
    });
    try {
      const result = await Promise.race([this.reader.read(), timeout]);
      if (result.done) {
        const tail = this.decoder.decode();
        return tail.length > 0 ? tail : undefined;
      }
      return this.decoder.decode(result.value!, { stream: true });
    } catch (error) {
      if (timedOut) throw timedOut;
      if (isIrError(error)) throw error;
      throw irError("upstream_bad_gateway", "upstream connection failed mid-body");
    } finally {
      clearTimeout(timer);
    }
  }

  async readAll(): Promise<string> {
    let text = "";
    for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) text += chunk;
    return text;
  }

  cancel(): void {
    this.reader.cancel().catch(() => {});
  }
}

export function isIrError(value: unknown): value is IrError {
  return typeof value === "object" && value !== null && "kind" in value && "status" in value && "message" in value;
}
