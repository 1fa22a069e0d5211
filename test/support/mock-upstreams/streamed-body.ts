/**
 * A response body written frame by frame, with an optional delay between frames and an
 * optional abrupt cut. Frames are pulled on demand (and may be generated lazily), so a
 * client that stops reading stops the mock, and cancelling (client gone, server stopped)
 * clears the pending timer.
 */

export interface StreamedBodyOptions {
  status?: number;
  headers: Record<string, string>;
  /** Delay before every frame but the first. */
  chunkDelayMs: number;
  /** Reset the connection after this many frames instead of finishing the body. */
  cutAfter?: number;
  /** Told the size of every frame handed to the server. */
  onBytes?: (bytes: number) => void;
}

/**
 * Time given to the frames already enqueued to reach the socket before the cut; without
 * it Bun may reset the connection before flushing them (or even the status line).
 */
const CUT_FLUSH_MS = 15;

export function streamedBody(frames: Iterable<string>, options: StreamedBodyOptions): Response {
  const encoder = new TextEncoder();
  const source = frames[Symbol.iterator]();
  let index = 0;
  let cancelled = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let wake: (() => void) | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (ms <= 0) return resolve();
      wake = resolve;
      timer = setTimeout(() => {
        timer = undefined;
        wake = undefined;
        resolve();
      }, ms);
    });

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const cutNow = options.cutAfter !== undefined && index >= options.cutAfter;
      await sleep(cutNow ? CUT_FLUSH_MS : index > 0 ? options.chunkDelayMs : 0);
      if (cancelled) return;
      if (cutNow) {
        // Erroring the body makes Bun drop the socket mid-body: no terminal frame, no
        // final zero-length chunk, the client sees a reset. `undefined` as the reason
        // because Bun prints Error reasons to stderr.
        controller.error(undefined);
        return;
      }
      const next = source.next();
      if (next.done === true) {
        controller.close();
        return;
      }
      index += 1;
      const bytes = encoder.encode(next.value);
      options.onBytes?.(bytes.byteLength);
      controller.enqueue(bytes);
    },
    cancel() {
      cancelled = true;
      if (timer !== undefined) clearTimeout(timer);
      wake?.();
    },
  });

  return new Response(body, { status: options.status ?? 200, headers: options.headers });
}
