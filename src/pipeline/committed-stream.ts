import { irError, type CodecContext, type IrError, type ProtocolId } from "../ir";
import type { StreamHandle } from "../translation/translator";
import type { StreamOutput } from "../translation/translation-types";
import type { PassthroughFramer } from "./passthrough-framer";
import type { BodyReader } from "../routing/body-reader";
import { readOnForUsage } from "./read-on-for-usage";
import type { StreamObserver, StreamRefusal, StreamSettled } from "./stream-observer";
import type { InFlightRequests, InterruptibleStream } from "./in-flight-requests";
import { streamErrorFrame } from "./stream-error-frame";
import { terminalFrameAt } from "./stream-terminal";
import { asIrError, withChargeNote } from "./inference-error";
import { SSE_KEEPALIVE } from "../protocols/sse";

/** Same-protocol streams: upstream chunks sent to the translation session for accounting and not yet answered. */
const MAX_ACCOUNTING_PUSHES = 4;
/** Idle time after which a committed stream gets an SSE comment (`: keepalive`). */
const KEEPALIVE_MS = 15_000;

export interface CommittedDeps {
  /** Where a committed stream registers, so shutdown can end it cleanly. */
  inFlight: Pick<InFlightRequests, "addStream" | "deleteStream">;
  /** A client that reads nothing for this long has its stream ended (0: never). */
  stallTimeoutMs: number;
  /** How long a refused answer's upstream is read on for its usage (default READ_ON_MS, read-on-for-usage.ts). */
  readOnMs?: number;
}

/** The attempt a committed stream relays (relay-stream.ts RelayInput). */
export interface CommittedInput {
  clientProtocol: ProtocolId;
  context: Omit<CodecContext, "newId">;
  reader: BodyReader;
  abortUpstream: () => void;
  release: () => void;
  observer: StreamObserver;
}

/** What the stream's outputs said so far. */
export interface StreamSeen {
  firstToken: boolean;
  finish: boolean;
  /** The first error an output reported. */
  error?: IrError;
  refusal?: StreamRefusal;
}

/** What phase 1 of relayStream hands over. */
export interface CommittedState {
  handle: StreamHandle;
  framer: PassthroughFramer | undefined;
  note: (output: StreamOutput) => StreamOutput;
  costed: (text: string, charge: number | null) => string;
  /** Client text held back until the first token. */
  held: string[];
  /**
   * The upstream's body was read to its end and its translation ended: by the relay, by a
   * read-on, or in phase 1 (`upstreamEnd`; a stream that ended there cleanly is answered as
   * one body and never comes here).
   */
  ended: boolean;
  /** What the outputs said so far; `note` keeps it current. */
  seen: StreamSeen;
  /** Phase 1's read after the terminal frame, not yet over: the relay's first read. */
  pendingRead?: Promise<string | undefined>;
  /** The upstream's body ended in phase 1 and this is its translation's end (noted): the stream finishes with it. */
  upstreamEnd?: StreamOutput;
}

/**
 * The committed phase of a stream, as a direct source (`type: "direct"`: each chunk goes
 * straight to the response's socket buffer, with no JavaScript queue in between; a pull
 * source with a byte queue cost about 30 µs more per stream, test/bench/HISTORY.md). The
 * next upstream chunk is read only while the client keeps up: when Bun's buffer for the
 * response is full, a write returns a promise, and nothing more is read from the upstream
 * until it resolves, so a client that stops reading stops the upstream too. What one stream
 * holds in memory is that buffer, one upstream chunk being relayed and the fetch body's
 * own buffer; the rest waits in the kernel's socket buffers and, beyond them, at the
 * upstream. When a client has read nothing for STREAM_STALL_TIMEOUT_MS the upstream is
 * aborted, the request is settled as cancelled with the output produced so far, and the
 * stream ends with its protocol's error frame. At the shutdown grace limit (`interrupt`)
 * the stream ends the same way and is settled as failed.
 */
export class CommittedStream implements InterruptibleStream {
  private controller!: ReadableStreamDirectController;
  /** The last write found the response's buffer full: resolves once the client has read. */
  private backpressure: Promise<number> | undefined;
  /** A relay is running (not waiting for the client): reading the upstream, translating, or finishing. */
  private pulling = false;
  /** Settled and closed (or closing); nothing more is written. */
  private finished = false;
  private clientGone = false;
  /** Why the gateway ended the stream itself: the client stopped reading, or shutdown. */
  private interruption: { cause: "stall" | "shutdown"; error: IrError } | undefined;
  private lastWrite = performance.now();
  private keepalive: ReturnType<typeof setInterval> | undefined;
  private stallTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * Client text from the protocol's terminal frame on (stream-terminal.ts): written only
   * once the request is settled and its holds ended, with the stream's last bytes.
   */
  private tail = "";
  /** Same protocol: accounting pushes in flight, oldest first. */
  private readonly accounting: Promise<unknown>[] = [];
  private readonly done = Promise.withResolvers<void>();

  constructor(
    private readonly deps: CommittedDeps,
    private readonly input: CommittedInput,
    private readonly state: CommittedState,
  ) {}

  /**
   * The whole committed stream (Bun calls a direct source's `pull` once): what phase 1
   * held, then upstream chunks as the client takes them, until the stream is over.
   */
  async run(controller: ReadableStreamDirectController): Promise<void> {
    this.controller = controller;
    for (const text of this.state.held) this.relayWrite(text);
    this.state.held.length = 0;
    this.deps.inFlight.addStream(this);
    // An upstream that thinks for a long time must not let proxies close an idle connection.
    this.keepalive = setInterval(() => {
      if (this.pulling && performance.now() - this.lastWrite >= KEEPALIVE_MS) this.write(SSE_KEEPALIVE);
    }, KEEPALIVE_MS / 3);
    while (!this.finished) {
      await this.relay();
      await this.clientCaughtUp();
    }
    await this.done.promise;
  }

  /**
   * Relays upstream chunks until the response's buffer is full (a write returned a promise)
   * or the stream is over. Not one call of this per chunk: a long stream's chunks go
   * through one loop, without two more continuations each.
   */
  private async relay(): Promise<void> {
    if (this.finished) return;
    this.pulling = true;
    try {
      while (!this.finished && this.backpressure === undefined) await this.relayNext();
    } catch (error) {
      if (!this.finished) await this.fail(asIrError(error, irError("upstream_bad_gateway", "upstream stream failed")));
    } finally {
      this.pulling = false;
    }
  }

  /**
   * The response's buffer is full: waits (reading nothing from the upstream) until the
   * client has read, or the stream was ended meanwhile. This is the wait the stall timer
   * bounds.
   */
  private async clientCaughtUp(): Promise<void> {
    const drained = this.backpressure;
    this.backpressure = undefined;
    if (drained === undefined || this.finished) return;
    const stallMs = this.deps.stallTimeoutMs;
    if (stallMs > 0) this.stallTimer = setTimeout(this.onStall, stallMs);
    try {
      await Promise.race([drained, this.done.promise]);
    } finally {
      clearTimeout(this.stallTimer);
    }
  }

  cancel(): void {
    this.clientGone = true;
    this.stop();
  }

  interrupt(error: IrError): Promise<void> {
    this.interruption ??= { cause: "shutdown", error };
    this.stop();
    return this.done.promise;
  }

  private readonly onStall = () => {
    if (this.finished || this.pulling) return;
    const waited = this.deps.stallTimeoutMs;
    this.interruption ??= { cause: "stall", error: irError("client_timeout", `the client read nothing for ${waited} ms; the stream was ended`) };
    this.stop();
  };

  /** Ends the stream from outside a pull: a pull in progress fails on the cancelled read and concludes itself. */
  private stop(): void {
    if (this.finished) return;
    this.input.abortUpstream();
    this.input.reader.cancel();
    if (!this.pulling) void this.fail(irError("upstream_bad_gateway", "stream interrupted"));
  }

  /** Relays one upstream chunk, or finishes the stream at the upstream's end. */
  private async relayNext(): Promise<void> {
    const { handle, framer, note } = this.state;
    this.throwIfRefused();
    if (this.state.upstreamEnd) return this.finish();
    const pending = this.state.pendingRead;
    this.state.pendingRead = undefined;
    const chunk = await (pending ?? this.input.reader.next());
    if (chunk === undefined) {
      // A read that stop() cut short may end instead of failing.
      if (this.interruption || this.clientGone) throw irError("upstream_bad_gateway", "stream interrupted");
      return this.finish();
    }
    if (!framer) {
      const output = note(handle.pushNow ? handle.pushNow(chunk) : await handle.push(chunk));
      // A check inside the translation refuses after the text it let through: that text goes
      // out before the error frame. An observer's refusal withholds the whole output.
      if (output.signals.refused) this.relayWrite(output.out);
      this.throwIfRefused();
      return this.relayWrite(output.out);
    }
    // The accounting copy, decoded here at once when the translation is on this thread.
    if (handle.pushNow) {
      note(handle.pushNow(chunk));
      return this.relayWrite(framer.take(chunk));
    }
    // In a worker it is decoded on the side; a slow session holds the relay back instead of
    // queueing chunks without bound.
    const push = handle.push(chunk).then(note);
    // Awaited below or when the stream ends; a failure must not go unhandled until then.
    push.catch(() => {});
    this.accounting.push(push);
    if (this.accounting.length > MAX_ACCOUNTING_PUSHES) await this.accounting.shift();
    return this.relayWrite(framer.take(chunk));
  }

  /** The upstream ended. An error frame it sent mid-stream makes the request failed (the frame itself was relayed). */
  private async finish(): Promise<void> {
    const { handle, framer, note, costed, seen } = this.state;
    await Promise.all(this.accounting);
    const output = this.state.upstreamEnd ?? note(await handle.end());
    this.state.ended = true;
    this.throwIfRefused();
    const error = output.signals.error ?? seen.error;
    this.finished = true;
    const clientGone = this.clientGone;
    const settled = this.input.observer.onEnd({
      attemptOutcome: clientGone ? "aborted" : error ? "provider_error" : "success",
      ...(error === undefined ? {} : { error }),
      status: clientGone ? "cancelled" : error ? "failed" : "succeeded",
      interrupted: clientGone,
    });
    await settled.holdsEnded;
    const charge = settled.chargeMicroUsd;
    if (!framer) this.write(this.takeTail() + costed(output.out, charge));
    else {
      this.write(this.takeTail() + costed(framer.flush(), charge));
      // An upstream that ended early: the passthrough has no encoder to close its stream.
      if (output.signals.error) this.write(this.errorFrame(output.signals.error));
    }
    this.close();
  }

  /** A response-side check refused the answer (StreamObserver.onParts): the stream ends with its error. */
  private throwIfRefused(): void {
    const refusal = this.state.seen.refusal;
    if (refusal) throw refusal.error;
  }

  private async fail(cause: IrError): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    const { handle, framer } = this.state;
    // A response-side check refused the rest of an answer the upstream had begun: the client is told the request is charged for it.
    const refusedMidway = !this.clientGone && this.interruption === undefined && this.state.seen.refusal?.error === cause;
    const error = this.interruption?.error ?? (refusedMidway ? withChargeNote(cause, null, "partly") : cause);
    await Promise.allSettled(this.accounting);
    const readToEnd = refusedMidway && this.state.seen.refusal?.readOn === true && !this.state.ended && (await readOnForUsage(this.input.reader, handle, this.state.note, this.deps.readOnMs));
    if (readToEnd) this.state.ended = true;
    // Always close the translation session, so no worker keeps its state.
    const output = this.state.ended ? undefined : await handle.fail(error).catch(() => undefined);
    this.state.ended = true;
    const observer = this.input.observer;
    // Ending the client's stream may drop what its encoder held back (unsigned thinking): the record says so.
    const warnings = output?.warnings === undefined ? {} : { warnings: output.warnings };
    let settled: StreamSettled;
    if (this.clientGone || this.interruption) {
      // Neither the client leaving, nor it stalling, nor shutdown is the provider's doing.
      // A client that stopped reading is cancelled like one that left; what shutdown cut is failed.
      const cancelled = this.clientGone || this.interruption?.cause === "stall";
      settled = observer.onEnd({ attemptOutcome: "aborted", error, status: cancelled ? "cancelled" : "failed", interrupted: cancelled, ...warnings });
    } else if (this.state.seen.refusal?.error === cause) {
      // A response-side check refused the answer: the upstream did its part, and is not read further.
      this.input.abortUpstream();
      settled = observer.onEnd({ attemptOutcome: "success", error, status: "failed", interrupted: false, ...(readToEnd ? { readToEnd } : {}), ...warnings });
    } else {
      settled = observer.onEnd({ attemptOutcome: cause.kind === "upstream_timeout" ? "timeout" : "provider_error", error, status: "failed", interrupted: false, ...warnings });
    }
    await settled.holdsEnded;
    // Bun cannot drop a connection whose client does not read: a stalled client finds the
    // error frame and the end of the stream behind what was already queued for it.
    this.write(this.takeTail() + (framer || !output ? this.errorFrame(error) : output.out));
    this.close();
  }

  private errorFrame(error: IrError): string {
    const { clientProtocol, context } = this.input;
    return streamErrorFrame(clientProtocol, error, context.requestId, context.model);
  }

  /**
   * Relayed text: written at once up to the protocol's terminal frame; from there on it is
   * held (`tail`) until the stream's end writes it.
   */
  private relayWrite(text: string): void {
    if (!text) return;
    if (this.tail) {
      this.tail += text;
      return;
    }
    const at = terminalFrameAt(this.input.clientProtocol, text);
    if (at === -1) return this.write(text);
    this.tail = text.slice(at);
    return this.write(text.slice(0, at));
  }

  private takeTail(): string {
    const tail = this.tail;
    this.tail = "";
    return tail;
  }

  /** Sends text to the client (flushed at once: an SSE frame must not wait); a full buffer sets `backpressure`. */
  private write(text: string): void {
    if (!text || this.clientGone) return;
    const written = this.controller.write(text);
    if (typeof written !== "number") this.backpressure = written;
    this.lastWrite = performance.now();
  }

  private close(): void {
    this.finished = true;
    clearInterval(this.keepalive);
    clearTimeout(this.stallTimer);
    this.deps.inFlight.deleteStream(this);
    this.input.reader.cancel();
    this.input.release();
    if (!this.clientGone) {
      try {
        this.controller.close();
      } catch {
        // Already closed or errored by the runtime.
      }
    }
    this.done.resolve();
  }
}
