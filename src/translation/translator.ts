import { IrDecodeError, type IrError, type IrMessage, type IrRequest, type ProtocolId } from "../ir";
import { StreamTranslation } from "./stream-translation";
import { bodySize, decodeClientRequest, encodeUpstreamRequest } from "./translate-request";
import { translateResponse, type TranslateResponseInput } from "./translate-response";
import { KeptMessagesGone, type TranslationMessage, type TranslationReply } from "./translation-handler";
import { findLargeStrings, type JsonPath } from "./large-strings";
import { packForWorker, unpackFromWorker } from "./worker-message";
import type { Beside, WorkerAnswer } from "../workers/wire-format";
import { WorkerCrashedError } from "../workers/worker-errors";
import { withErrorsRevived, type ClientBody, type DecodedRequest, type EncodedUpstreamRequest, type PartGuard, type StreamOpenOptions, type StreamOutput, type TranslatedResponse } from "./translation-types";

/** One stream's translation, wherever it runs. */
export interface StreamHandle {
  push(text: string): Promise<StreamOutput>;
  end(): Promise<StreamOutput>;
  fail(error: IrError): Promise<StreamOutput>;
  /**
   * A translation on this thread answers a chunk at once: the relay calls this instead of
   * `push`, with no promise, continuation or accounting queue per chunk (a long stream has
   * hundreds; test/bench/HISTORY.md, 2026-11-29 20:33–21:30). Absent when the translation runs
   * in a worker.
   */
  readonly pushNow?: (text: string) => StreamOutput;
}

/**
 * The pipeline's view of translation. Two implementations with identical results:
 * inline (on the request thread) and pooled (Bun workers, strings over postMessage).
 * Which one serves is configuration (TRANSLATION_MODE), decided by the benchmark.
 */
export interface Translator {
  readonly mode: "inline" | "pool" | "auto";
  decodeRequest(protocol: ProtocolId, body: ClientBody, injected?: Record<string, unknown>): Promise<DecodedRequest>;
  encodeRequest(protocol: ProtocolId, request: IrRequest, providerModelId: string, stream: boolean): Promise<EncodedUpstreamRequest>;
  translateResponse(input: TranslateResponseInput): Promise<TranslatedResponse>;
  /** With a `guard` (a response-side check) the stream is translated on this thread, the same protocol included. */
  openStream(options: StreamOpenOptions, guard?: PartGuard): StreamHandle;
  close(): Promise<void>;
}

export class InlineTranslator implements Translator {
  readonly mode = "inline" as const;
  async decodeRequest(protocol: ProtocolId, body: ClientBody, injected?: Record<string, unknown>) {
    return decodeClientRequest(protocol, body, injected);
  }
  async encodeRequest(protocol: ProtocolId, request: IrRequest, providerModelId: string, stream: boolean) {
    return encodeUpstreamRequest(protocol, request, providerModelId, stream);
  }
  async translateResponse(input: TranslateResponseInput) {
    return translateResponse(input);
  }
  openStream(options: StreamOpenOptions, guard?: PartGuard): StreamHandle {
    const translation = new StreamTranslation(guard ? { ...options, passthrough: false } : options, guard);
    return {
      pushNow: (text) => translation.push(text),
      push: async (text) => translation.push(text),
      end: async () => translation.end(),
      fail: async (error) => translation.fail(error),
    };
  }
  async close() {}
}

const NONE: JsonPath[] = [];

/** The pool surface this translator needs (src/workers/worker-pool.ts). */
export interface StringPool {
  exchange(payload: string, beside: Beside | undefined, affinityKey?: string): Promise<WorkerAnswer>;
  /** Calls in flight on the worker a key is pinned to (undefined: none). */
  pinnedLoad(affinityKey: string): number | undefined;
  release(affinityKey: string): void;
  close(): Promise<void>;
}

export class PooledTranslator implements Translator {
  readonly mode = "pool" as const;
  /**
   * Where each request decoded here has its long strings, to set them aside again for its
   * encode (large-strings.ts). Kept by its messages, which the request's later forms share
   * (a routing preset's defaults, the attempt's output limit: each a new object).
   */
  private readonly largeStrings = new WeakMap<readonly IrMessage[], JsonPath[]>();
  /**
   * The key under which the worker that decoded a request keeps its messages, by those
   * messages: while the request's `messages` is still the decoded array, its encode goes to
   * that worker without them. The request thread never writes JSON of them for it, nor does
   * the worker parse it: for 8 MiB of 150,000 small messages those were a fifth of the
   * request thread's time (test/bench/HISTORY.md, 2026-11-29 16:04–16:13). The request
   * thread must not change decoded messages in place (it gives a request new messages
   * instead: a preset's defaults and the output limit touch only top-level fields).
   */
  private readonly keptKeys = new WeakMap<readonly IrMessage[], string>();
  /** A request that ended without an encode (refused, or count_tokens): its messages are forgotten once its own are collected. */
  private readonly unkept = new FinalizationRegistry<string>((key) => this.forget(key));
  private nextKeep = 0;
  constructor(private readonly pool: StringPool) {}

  /**
   * A message's body, and the long strings of its request at `requestPaths`, go beside its
   * JSON, and so do the answer's (worker-message.ts). Answers the value and where its
   * request's long strings were.
   */
  private async exchange(message: TranslationMessage, affinityKey?: string, requestPaths?: readonly JsonPath[]): Promise<{ value: unknown; paths: JsonPath[] | undefined }> {
    const packed = packForWorker(message, requestPaths);
    const answer = await this.pool.exchange(JSON.stringify(packed.value), packed.beside, affinityKey);
    const reply = JSON.parse(answer.body) as TranslationReply;
    if (reply.ok) return { value: reply.value, paths: unpackFromWorker(reply.value, answer) };
    if (reply.decodeError !== undefined) throw new IrDecodeError(reply.decodeError);
    if (reply.keptGone) throw new KeptMessagesGone(reply.message);
    throw new Error(reply.message);
  }

  private forget(key: string): void {
    this.send({ op: "forget", key }, key)
      .catch(() => {})
      .finally(() => this.pool.release(key));
  }

  private async send<T>(message: TranslationMessage, affinityKey?: string): Promise<T> {
    return (await this.exchange(message, affinityKey)).value as T;
  }

  async decodeRequest(protocol: ProtocolId, body: ClientBody, injected?: Record<string, unknown>) {
    const key = `kept#${this.nextKeep++}`;
    let exchanged: { value: unknown; paths: JsonPath[] | undefined };
    try {
      exchanged = await this.exchange({ op: "decode_request", protocol, body, keep: key, ...(injected ? { injected } : {}) }, key);
    } catch (error) {
      // Not decoded: nothing was kept.
      this.pool.release(key);
      throw error;
    }
    const decoded = exchanged.value as DecodedRequest;
    const messages = decoded.request.messages;
    // One with none is remembered too, or its encode would search it again.
    this.largeStrings.set(messages, exchanged.paths ?? NONE);
    this.keptKeys.set(messages, key);
    this.unkept.register(messages, key, messages);
    return decoded;
  }
  async encodeRequest(protocol: ProtocolId, request: IrRequest, providerModelId: string, stream: boolean) {
    // The paths found at its decode; a path that no longer leads to a long string is skipped
    // (large-strings.ts). A request whose messages were replaced is searched again.
    const paths = this.largeStrings.get(request.messages) ?? findLargeStrings(request);
    const key = this.keptKeys.get(request.messages);
    if (key !== undefined) {
      // The first encode takes the kept messages; another (a later candidate's) sends them.
      this.keptKeys.delete(request.messages);
      this.unkept.unregister(request.messages);
    }
    // A worker busy with another call (a large body's, which may take hundreds of ms) would
    // hold this encode behind it: the messages go to the least loaded one instead.
    if (key !== undefined && this.pool.pinnedLoad(key) !== 0) this.forget(key);
    else if (key !== undefined) {
      try {
        const { value } = await this.exchange({ op: "encode_request", protocol, request: { ...request, messages: [] }, providerModelId, stream, keptMessages: key }, key, paths);
        return value as EncodedUpstreamRequest;
      } catch (error) {
        // Its worker died or dropped them: the messages go from here after all.
        if (!(error instanceof KeptMessagesGone) && !(error instanceof WorkerCrashedError)) throw error;
      } finally {
        this.pool.release(key);
      }
    }
    const { value } = await this.exchange({ op: "encode_request", protocol, request, providerModelId, stream }, undefined, paths);
    return value as EncodedUpstreamRequest;
  }
  async translateResponse(input: TranslateResponseInput) {
    return withErrorsRevived(await this.send<TranslatedResponse>({ op: "translate_response", ...input }));
  }
  openStream(options: StreamOpenOptions, guard?: PartGuard): StreamHandle {
    // A guard holds compiled patterns and state a worker cannot share: that stream is translated here.
    if (guard) return new InlineTranslator().openStream(options, guard);
    const key = options.sessionId;
    // Opening is queued ahead of every push on the same pinned worker; awaiting it
    // here would add a round trip to time-to-first-byte for nothing.
    const opened = this.send<null>({ op: "stream_open", options }, key);
    const finish = async (message: TranslationMessage) => {
      try {
        await opened;
        return withErrorsRevived(await this.send<StreamOutput>(message, key));
      } finally {
        this.pool.release(key);
      }
    };
    return {
      push: async (text) => {
        await opened;
        return withErrorsRevived(await this.send<StreamOutput>({ op: "stream_push", sessionId: key, text }, key));
      },
      end: () => finish({ op: "stream_end", sessionId: key }),
      fail: (error) => finish({ op: "stream_fail", sessionId: key, error }),
    };
  }
  close() {
    return this.pool.close();
  }
}

/**
 * What the benchmark decided (src/translation/README.md, "What runs where (the benchmark decided)"): a worker round trip costs a
 * fixed ~20–60 µs plus copying, while translating a small body takes a few µs; so
 * small payloads and every stream chunk are translated inline, and only bodies
 * larger than `inlineMaxBytes` (long agent histories, base64 images) go to the pool,
 * where their parse and re-encode cannot stall other requests on the event loop.
 */
export class AutoTranslator implements Translator {
  readonly mode = "auto" as const;
  private readonly inline = new InlineTranslator();
  /**
   * Size of the client body each decoded request came from, to place its encode. Kept by its
   * messages, which the request's later forms share (a preset's defaults, the attempt's output
   * limit): a 32 MiB request given an output limit was encoded on the request thread.
   */
  private readonly sourceSize = new WeakMap<readonly IrMessage[], number>();

  constructor(
    private readonly pooled: PooledTranslator,
    private readonly inlineMaxBytes: number,
  ) {}

  async decodeRequest(protocol: ProtocolId, body: ClientBody, injected?: Record<string, unknown>) {
    const size = bodySize(body);
    const decoded = size <= this.inlineMaxBytes ? await this.inline.decodeRequest(protocol, body, injected) : await this.pooled.decodeRequest(protocol, body, injected);
    this.sourceSize.set(decoded.request.messages, size);
    return decoded;
  }
  encodeRequest(protocol: ProtocolId, request: IrRequest, providerModelId: string, stream: boolean) {
    const size = this.sourceSize.get(request.messages) ?? 0;
    return size <= this.inlineMaxBytes
      ? this.inline.encodeRequest(protocol, request, providerModelId, stream)
      : this.pooled.encodeRequest(protocol, request, providerModelId, stream);
  }
  translateResponse(input: TranslateResponseInput) {
    return bodySize(input.body) <= this.inlineMaxBytes ? this.inline.translateResponse(input) : this.pooled.translateResponse(input);
  }
  openStream(options: StreamOpenOptions, guard?: PartGuard): StreamHandle {
    return this.inline.openStream(options, guard);
  }
  close() {
    return this.pooled.close();
  }
}
