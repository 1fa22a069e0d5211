import { IrDecodeError, type CodecContext, type IrResponse, type ProtocolId } from "../ir";
import { codecFor } from "./codec-registry";
import { exceedsJsonDepth, MAX_JSON_DEPTH, textMayExceedDepth } from "../protocols/shared/json-depth";
import { withIdSource } from "./deterministic-ids";
import { rewriteModelIds } from "./rewrite-model-id";
import { utf8Bytes } from "./utf8-bytes";
import { clientActionRefusal, clientActionWarning } from "./client-action";
import { emptySignals, type ResponseRewrite, type TranslatedResponse, type TranslationSignals, type UpstreamBody } from "./translation-types";
import { bodyText } from "./translate-request";

export interface TranslateResponseInput {
  upstream: ProtocolId;
  client: ProtocolId;
  body: UpstreamBody;
  context: Omit<CodecContext, "newId">;
  /** Decode and encode even when the protocols match, so only what the IR carries reaches the client (a customer-supplied base). */
  reencode?: boolean;
}

function signalsOf(response: IrResponse): TranslationSignals {
  const signals = emptySignals();
  if (response.usage) signals.usageFrames.push(response.usage);
  signals.finish = response.finish;
  for (const part of response.content) {
    if (part.type === "text" && part.text) {
      signals.firstToken ??= "text";
      signals.outputBytes += utf8Bytes(part.text);
    } else if (part.type === "reasoning" && part.text) {
      signals.firstToken ??= "reasoning";
      signals.outputBytes += utf8Bytes(part.text);
    } else if (part.type === "tool_call") {
      signals.firstToken ??= "tool";
      signals.toolCalls++;
      signals.outputBytes += utf8Bytes(part.name) + utf8Bytes(part.arguments);
    }
  }
  return signals;
}

/**
 * A complete upstream body -> the client's body, with the signals for metering and what
 * the IR or the client's protocol could not carry (the decoder's and the encoder's
 * warnings, which the pipeline adds to the request's).
 * Same protocol: the upstream bytes with only the model id changed. A body that is
 * not the upstream protocol's shape throws IrDecodeError (an invalid upstream response).
 * With a `rewrite` (a response-side check, inline only) the answer is always decoded,
 * rewritten and encoded, the same protocol included; the signals count what the upstream
 * sent, and a refusal is reported in them.
 */
export function translateResponse(input: TranslateResponseInput, rewrite?: ResponseRewrite): TranslatedResponse & { body: string } {
  const text = bodyText(input.body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new IrDecodeError("upstream response is not valid JSON");
  }
  // A hostile upstream's deep tool input would overflow the stack when re-encoded: an invalid upstream response.
  if (textMayExceedDepth(text) && exceedsJsonDepth(parsed)) throw new IrDecodeError(`upstream response nests deeper than ${MAX_JSON_DEPTH} levels`);
  const response = codecFor(input.upstream).decodeResponse(parsed);
  const signals = signalsOf(response);
  if (rewrite === undefined && input.upstream === input.client && input.reencode !== true) return { body: rewriteModelIds(text, input.context.model), signals, warnings: [] };
  // An action only the upstream's own wire can carry: a re-encoded answer would end as an empty success.
  if (response.clientAction !== undefined) {
    return { body: "", signals: { ...signals, refused: clientActionRefusal(response.clientAction, input.client) }, warnings: [clientActionWarning(response.clientAction)] };
  }
  let answer = response;
  if (rewrite !== undefined) {
    const rewritten = rewrite(response);
    if (rewritten.refused) return { body: "", signals: { ...signals, refused: rewritten.refused }, warnings: [] };
    answer = rewritten.response;
  }
  const encoded = codecFor(input.client).encodeResponse(answer, withIdSource(input.context));
  // What the upstream's decoder could not read is lost to the client as much as what its encoder drops.
  const warnings = response.warnings === undefined ? encoded.warnings : [...response.warnings, ...encoded.warnings];
  return { body: JSON.stringify(encoded.value), signals, warnings };
}

