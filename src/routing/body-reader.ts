import { irError, isIrError, type IrError } from "../ir";
import { textOfBytes, type BodyBytes } from "../http/request-body";

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
 * A whole non-streaming body, never more than `maxBytes` of it: an upstream's answer is read
 * into memory at once, and one that never ends (a hostile base URL behind a customer's own
 * key, a broken proxy) must not grow the gateway's memory for as long as it sends. Bun's
 * native `text()` is ~10 µs per request cheaper than reading chunk by chunk, so it reads a
 * body whose Content-Length is within the limit (fetch holds the upstream to it); one past
 * it is refused before it is read, and one without a length, or compressed (its length is
 * not what it inflates to), is read in chunks and cut off at the limit. The idle deadline
 * covers the body as a whole: a non-streaming upstream sends its head once the answer is
 * ready (the first-byte timeout covers the wait for it), and the body follows at once.
 */
export async function readBodyText(response: Response, idleTimeoutMs: number, abort: () => void, maxBytes: number): Promise<string> {
  // No body is more than Infinity bytes: it always comes back as text.
  return (await readBodyTextOrBytes(response, idleTimeoutMs, abort, maxBytes, Number.POSITIVE_INFINITY)) as string;
}

/**
 * A whole body within the bounds of readBodyText: as text when it is `bytesAbove` bytes or
 * fewer, else as bytes, for a worker to decode (their buffers are moved to it, not copied).
 * An answer of tens of MiB read with text() is decoded on this thread, which every request
 * shares (a customer's own base URL can send one). A declared length is read into one buffer
 * by the runtime (`arrayBuffer()`: for 30 MiB of ASCII, 27–43 ms of this thread's CPU against
 * 50–60 reading its chunks, measured 2026-11-29); without one, chunk by chunk within the limit.
 */
export async function readBodyTextOrBytes(
  response: Response,
  idleTimeoutMs: number,
  abort: () => void,
  maxBytes: number,
  bytesAbove: number,
  /** Asked for room for the answer (answer-bytes.ts): its declared length before it is read, or its length so far while it is read; false stops it. */
  room?: (bytes: number) => boolean,
): Promise<string | BodyBytes> {
  const declared = plainLength(response);
  if (declared !== undefined && declared > maxBytes) {
    abort();
    throw tooLarge(maxBytes);
  }
  if (declared !== undefined && room !== undefined && !room(declared)) {
    abort();
    throw noRoom();
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort();
  }, idleTimeoutMs);
  try {
    if (declared !== undefined && declared <= bytesAbove) return await response.text();
    if (declared !== undefined) {
      const bytes = new Uint8Array(await response.arrayBuffer());
      return { chunks: [bytes], byteLength: bytes.byteLength };
    }
    const bytes = await readChunksWithin(response, maxBytes, abort, declared === undefined ? room : undefined);
    return bytes.byteLength > bytesAbove ? bytes : textOfBytes(bytes);
  } catch (error) {
    if (isIrError(error) && error.kind === "upstream_invalid_response") throw error;
    if (timedOut) throw irError("upstream_timeout", `upstream did not finish its body within ${idleTimeoutMs} ms`);
    throw irError("upstream_bad_gateway", "upstream connection failed mid-body");
  } finally {
    clearTimeout(timer);
  }
}

/** The body's Content-Length when it is what the body's bytes will be (no content coding), else undefined. */
function plainLength(response: Response): number | undefined {
  const length = response.headers.get("content-length");
  if (length === null) return undefined;
  const coding = response.headers.get("content-encoding");
  if (coding !== null && coding.toLowerCase() !== "identity") return undefined;
  const bytes = Number(length);
  return Number.isSafeInteger(bytes) && bytes >= 0 ? bytes : undefined;
}

async function readChunksWithin(response: Response, maxBytes: number, abort: () => void, room?: (bytes: number) => boolean): Promise<BodyBytes> {
  const chunks: Uint8Array[] = [];
  const body = response.body;
  if (body === null) return { chunks, byteLength: 0 };
  const reader = body.getReader();
  let byteLength = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { chunks, byteLength };
    byteLength += value.byteLength;
    if (byteLength > maxBytes || (room !== undefined && !room(byteLength))) {
      abort();
      reader.cancel().catch(() => {});
      throw byteLength > maxBytes ? tooLarge(maxBytes) : noRoom();
    }
    chunks.push(value);
  }
}

function noRoom(): IrError {
  return irError("upstream_invalid_response", "upstream answers to this account in flight are larger than UPSTREAM_ANSWER_BYTES_PER_ACCOUNT");
}

function tooLarge(maxBytes: number): IrError {
  return irError("upstream_invalid_response", `upstream answer is larger than ${maxBytes} bytes (MAX_UPSTREAM_BODY_BYTES)`);
}
