import { irError, type IrError } from "../ir";

/**
 * Reads an upstream body with an idle deadline, so a stalled upstream turns into a
 * timeout instead of a hang. One timer per body, re-armed by every read (a timer and a
 * Promise.race per chunk cost measurably more on the hot path). The deadline counts only
 * while a read is pending: a firing between reads (a slow client holding the relay
 * back) is ignored, and the next read re-arms it. When it fires during a read, `abort`
 * cancels the upstream request, which fails that read.
 */
export class BodyReader {
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  private readonly decoder = new TextDecoder();
  private readonly timer: ReturnType<typeof setTimeout>;
  private timedOut: IrError | undefined;
  private reading = false;

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly idleTimeoutMs: number,
    private readonly abort: (reason: IrError) => void,
  ) {
    this.reader = body.getReader();
    this.timer = setTimeout(this.onIdle, idleTimeoutMs);
  }

  private readonly onIdle = () => {
    if (!this.reading) return;
    this.timedOut = irError("upstream_timeout", `upstream sent nothing for ${this.idleTimeoutMs} ms`);
    this.abort(this.timedOut);
  };

  /** Next decoded text chunk, or undefined at the end. Throws an inference ApiError on timeout or network failure. */
  async next(): Promise<string | undefined> {
    if (this.timedOut) throw this.timedOut;
    this.timer.refresh();
    this.reading = true;
    let result: { done: boolean; value?: Uint8Array };
    try {
      result = await this.reader.read();
    } catch {
      this.reading = false;
      clearTimeout(this.timer);
      // The idle timer aborts the request, which is what fails the read.
      throw this.timedOut ?? irError("upstream_bad_gateway", "upstream connection failed mid-body");
    }
    this.reading = false;
    if (result.done) {
      clearTimeout(this.timer);
      const tail = this.decoder.decode();
      return tail.length > 0 ? tail : undefined;
    }
    return this.decoder.decode(result.value!, { stream: true });
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.reader.cancel().catch(() => {});
  }
}

/**
 * A whole non-streaming body. Bun's native `text()` is ~10 µs per request cheaper than
 * reading chunk by chunk, so the idle deadline covers the body as a whole: a
 * non-streaming upstream sends its head once the answer is ready (the first-byte
 * timeout covers the wait for it), and the body follows at once.
 */
export async function readBodyText(response: Response, idleTimeoutMs: number, abort: () => void): Promise<string> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort();
  }, idleTimeoutMs);
  try {
    return await response.text();
  } catch {
    if (timedOut) throw irError("upstream_timeout", `upstream did not finish its body within ${idleTimeoutMs} ms`);
    throw irError("upstream_bad_gateway", "upstream connection failed mid-body");
  } finally {
    clearTimeout(timer);
  }
}
