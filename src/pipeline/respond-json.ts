import { IrDecodeError, irError, isIrError, type ChargeSplice, type CodecContext, type IrError, type IrWarning, type ProtocolId } from "../ir";
import type { Translator } from "../translation/translator";
import type { ResponseRewrite, TranslationSignals, UpstreamBody } from "../translation/translation-types";
import { translateResponse } from "../translation/translate-response";
import { readBodyTextOrBytes } from "../routing/body-reader";
import { AnswerReservation, type AnswerBytes } from "../routing/answer-bytes";
import { codecFor } from "../translation/codec-registry";
import { internalError } from "./inference-error";
import type { AttemptRecord } from "../routing/attempt-record";

export interface RespondJsonDeps {
  translator: Pick<Translator, "translateResponse">;
  /** Longest wait between body chunks. */
  idleMs: number;
  /** The most of the answer read (MAX_UPSTREAM_BODY_BYTES). */
  maxBytes: number;
  /** An answer longer than this is read as bytes, for a worker to decode (the translator's inline limit). */
  bytesAbove: number;
  /** Each account's room for large answers in flight (UPSTREAM_ANSWER_BYTES_PER_ACCOUNT). */
  answerBytes: AnswerBytes;
}

export interface RespondJsonInput {
  response: Response;
  abortUpstream: () => void;
  upstreamProtocol: ProtocolId;
  clientProtocol: ProtocolId;
  context: Omit<CodecContext, "newId">;
  /** The response-side check, when a guardrail has content patterns (response-check.ts). */
  rewrite?: ResponseRewrite;
  /** Never relay the upstream's bytes, even in the same protocol (a customer-supplied base). */
  reencode?: boolean;
  /** The attempt: reading the body is time spent waiting for the upstream (Server-Timing). */
  waits: Pick<AttemptRecord, "upstreamMs">;
  /** Whose room a large answer takes (the caller's account). */
  accountId: string;
}

export type JsonAnswer =
  /** `warnings`: what the client's protocol could not carry of the answer. */
  | { ok: true; body: AnswerBody; signals: TranslationSignals; warnings: IrWarning[] }
  /** `refused`: the answer was refused after the upstream served it (a response-side check, an action the client's protocol cannot express): its signals, and what the record should say. */
  | { ok: false; error: IrError; refused?: { signals: TranslationSignals; warnings: IrWarning[] } };

/**
 * Stage 7 for whole answers: reads the upstream's successful body within the idle
 * timeout and translates it into the client's protocol. A body that cannot be read or
 * decoded is the upstream's failure (the next candidate may serve); anything else is ours.
 * A checked answer is translated on this thread (the check's compiled patterns stay here),
 * the same protocol included, so redaction can rewrite it.
 */
export async function respondJson(deps: RespondJsonDeps, input: RespondJsonInput): Promise<JsonAnswer> {
  // Held from the answer's head until its client body is made (the copies translation makes are gone then).
  const reservation = new AnswerReservation(deps.answerBytes, input.accountId);
  try {
    const readFrom = performance.now();
    let body: UpstreamBody;
    try {
      body = await readBodyTextOrBytes(input.response, deps.idleMs, input.abortUpstream, deps.maxBytes, deps.bytesAbove, (bytes) => reservation.grow(bytes));
    } finally {
      input.waits.upstreamMs = (input.waits.upstreamMs ?? 0) + (performance.now() - readFrom);
    }
    const translation = { upstream: input.upstreamProtocol, client: input.clientProtocol, body, context: input.context, ...(input.reencode ? { reencode: true } : {}) };
    const translated = input.rewrite ? translateResponse(translation, input.rewrite) : await deps.translator.translateResponse(translation);
    const refused = translated.signals.refused;
    if (refused) return { ok: false, error: refused, refused: { signals: translated.signals, warnings: translated.warnings } };
    const answer = translated.body instanceof Blob ? { bytes: translated.body, ...(translated.chargeAt ? { chargeAt: translated.chargeAt } : {}) } : translated.body;
    return { ok: true, body: answer, signals: translated.signals, warnings: translated.warnings };
  } catch (error) {
    if (isIrError(error)) return { ok: false, error };
    if (error instanceof IrDecodeError) return { ok: false, error: irError("upstream_invalid_response", `upstream response could not be read: ${error.message}`) };
    return { ok: false, error: internalError(error, input.context.requestId) };
  } finally {
    reservation.release();
  }
}

/**
 * A whole answer for the client: its text, or the UTF-8 bytes a worker made of a large one,
 * with where the client codec's charge goes into them (`chargeAt.at`, a byte offset).
 */
export type AnswerBody = string | { bytes: Blob; chargeAt?: ChargeSplice };

/** The client's 200, with its cost where its protocol has a place for it (the codec's addCharge). */
export function jsonResponse(protocol: ProtocolId, body: AnswerBody, chargeMicroUsd: number | null | undefined, headers: Record<string, string>): Response {
  const codec = codecFor(protocol);
  let costed: string | Blob;
  if (typeof body === "string") costed = codec.addCharge && chargeMicroUsd !== undefined ? codec.addCharge(body, chargeMicroUsd) : body;
  else {
    const { bytes, chargeAt } = body;
    // The same splice as addCharge, of bytes: the slices share the worker's bytes, and only their join copies them.
    costed =
      chargeAt && codec.chargeFields && chargeMicroUsd !== undefined && chargeMicroUsd !== null
        ? new Blob([bytes.slice(0, chargeAt.at), codec.chargeFields(chargeMicroUsd) + chargeAt.separator, bytes.slice(chargeAt.at)])
        : bytes;
  }
  return new Response(costed, { status: 200, headers: { "content-type": "application/json", ...headers } });
}
