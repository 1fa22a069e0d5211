import { LARGE_BODY_BYTES, finishRequest, holdBodyBytes, weighBody } from "./body-budget";
import { bodyWeight } from "./body-weight";

/** A request body past its route's limit, found while reading it. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/** A body as the bytes it was read in, never joined: `byteLength` is their sum. */
export interface BodyBytes {
  chunks: Uint8Array[];
  byteLength: number;
}

/**
 * A request body as text, never more than `limit` bytes read. With a Content-Length
 * (already checked against the limit by the request hooks, and a length the runtime
 * holds the client to) Bun's native text() reads it in one go; without one (chunked)
 * the stream is read chunk by chunk and abandoned at the first byte past the limit,
 * so a client cannot make the server buffer more than the limit whatever it sends.
 * A large body of a request under a BodyBudget (body-budget.ts) first waits for room.
 * Invalid UTF-8 becomes U+FFFD, as with text().
 */
export async function readBodyWithin(request: Request, limit: number): Promise<string> {
  // No body is more than Infinity bytes: it always comes back as text.
  return (await readBodyTextOrBytesWithin(request, limit, Number.POSITIVE_INFINITY)) as string;
}

/**
 * A request body within `limit` and the BodyBudget as readBodyWithin: as text when it is
 * `bytesAbove` bytes or fewer, else as the chunks it was read in. For a large body that is
 * handed to another thread: reading the stream costs this thread about half what text()
 * does for 32 MiB (text() grows one buffer and decodes it here: 237–275 against 130–150 ms
 * of CPU, measured 2026-11-29), and each chunk owns its buffer, which can be moved to a
 * worker instead of copied. A chunked body is read as chunks, and decoded here only if it
 * turned out small.
 */
export async function readBodyTextOrBytesWithin(request: Request, limit: number, bytesAbove: number): Promise<string | BodyBytes> {
  const declared = declaredLength(request, limit);
  if (declared !== undefined) await holdBodyBytes(request, declared);
  let body: string | BodyBytes;
  if (declared !== undefined && declared <= bytesAbove) body = await request.text();
  else {
    const bytes = await readChunks(request, limit, declared !== undefined);
    body = bytes.byteLength > bytesAbove ? bytes : textOfBytes(bytes);
  }
  // A large body holds, from here to its answer, what its handling will take.
  if ((typeof body === "string" ? body.length : body.byteLength) > LARGE_BODY_BYTES) await weighBody(request, bodyWeight(body));
  return body;
}

/** Bytes read as chunks, joined and decoded as `Request.text()` would (invalid UTF-8 becomes U+FFFD). */
export function textOfBytes(bytes: BodyBytes): string {
  if (bytes.chunks.length === 1) return new TextDecoder().decode(bytes.chunks[0]);
  return new TextDecoder().decode(Buffer.concat(bytes.chunks, bytes.byteLength));
}

/** `held`: the body's room in the budget is already held (its length was declared); an unknown one is held once it grows large. */
async function readChunks(request: Request, limit: number, held: boolean): Promise<BodyBytes> {
  const body = request.body;
  if (!body) return { chunks: [], byteLength: 0 };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      // Nothing read is kept, and the body's room in the budget goes back before the drain:
      // a client that sends its tail slowly holds its own connection, not other bodies' room.
      chunks.length = 0;
      finishRequest(request);
      await discardRest(reader, limit, DISCARD_WAIT_MS);
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
    // Its size unknown until the end, a large chunked body holds room for the largest it may become.
    if (!held && total > LARGE_BODY_BYTES) {
      held = true;
      await holdBodyBytes(request, limit);
    }
  }
  return { chunks, byteLength: total };
}

/** The body's Content-Length, undefined when it has none (chunked); past `limit` it is refused here. */
function declaredLength(request: Request, limit: number): number | undefined {
  const declared = request.headers.get("content-length");
  if (declared === null) return undefined;
  const length = Number(declared);
  if (length > limit) throw new BodyTooLargeError(limit);
  return length;
}

/** How long the 413 for a body past its limit waits for the rest of that body to be read and dropped. */
const DISCARD_WAIT_MS = 2_000;

/**
 * Reads and drops what follows a body past its limit (at most `budget` more bytes, for at
 * most `waitMs`) before the 413 goes out. The answer closes the connection, and a server
 * that closes one with unread bytes makes the kernel reset it: a client still writing its
 * body can then lose the response it was about to read. Drained first, the connection
 * closes cleanly; a client that sends more than the budget, or too slowly, still gets the
 * 413 when the budget or the wait runs out.
 */
async function discardRest(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> }, budget: number, waitMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
  });
  const drained = (async () => {
    let left = budget;
    while (left > 0) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value?.byteLength ?? 0;
    }
  })().catch(() => {});
  await Promise.race([drained, waited]);
  clearTimeout(timer);
  // Whatever is still coming is not read: stop the stream (a no-op once it ended).
  await reader.cancel().catch(() => {});
}

/**
 * Marks an early answer (the body was not read to its end) as the connection's last:
 * the rest of the client's upload is read at most in part, so the connection cannot
 * carry another request, and left open it would stall on the unread bytes (and hold up
 * a graceful shutdown that waits for it).
 */
export function closingConnection(response: Response): Response {
  response.headers.set("connection", "close");
  return response;
}
