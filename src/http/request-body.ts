import { LARGE_BODY_BYTES, holdBodyBytes } from "./body-budget";

/** A request body past its route's limit, found while reading it. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
    this.name = "BodyTooLargeError";
  }
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
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    const length = Number(declared);
    if (length > limit) throw new BodyTooLargeError(limit);
    await holdBodyBytes(request, length);
    return request.text();
  }
  const body = request.body;
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let held = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      discardRest(reader, limit);
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
    // Its size unknown until the end, a large chunked body holds room for the largest it may become.
    if (!held && total > LARGE_BODY_BYTES) {
      held = true;
      await holdBodyBytes(request, limit);
    }
  }
  return new TextDecoder().decode(Buffer.concat(chunks, total));
}

/**
 * Reads and drops what follows a body past its limit (at most `budget` more bytes), while
 * the 413 goes out. A server that closes a connection with unread bytes makes the kernel
 * reset it, and the client can lose the response it was about to read.
 */
function discardRest(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> }, budget: number): void {
  void (async () => {
    let left = budget;
    try {
      while (left > 0) {
        const { done, value } = await reader.read();
        if (done) return;
        left -= value?.byteLength ?? 0;
      }
    } catch {
      return;
    }
    await reader.cancel().catch(() => {});
  })();
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
