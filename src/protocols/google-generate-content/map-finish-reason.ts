import type { IrFinish, IrFinishReason } from "../../ir";
import type { GeminiFinishReason } from "./wire-types";

/**
 * `finishReason` ↔ canonical finish, values from
 * https://ai.google.dev/api/generate-content#FinishReason. Every safety-style block
 * (SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_*) is content_filter.
 * Gemini has no tool-call finish: a turn with a function call ends with STOP, which the
 * decoders turn into tool_calls themselves.
 */
const FINISH_REASON_TO_IR: Record<GeminiFinishReason, IrFinishReason> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
  IMAGE_PROHIBITED_CONTENT: "content_filter",
  LANGUAGE: "other",
  OTHER: "other",
  MALFORMED_FUNCTION_CALL: "other",
  UNEXPECTED_TOOL_CALL: "other",
  TOO_MANY_TOOL_CALLS: "other",
  FINISH_REASON_UNSPECIFIED: "other",
};

const IR_TO_FINISH_REASON: Record<IrFinishReason, GeminiFinishReason> = {
  stop: "STOP",
  length: "MAX_TOKENS",
  tool_calls: "STOP",
  content_filter: "SAFETY",
  error: "OTHER",
  other: "OTHER",
};

function isGeminiFinishReason(value: string): value is GeminiFinishReason {
  return Object.hasOwn(FINISH_REASON_TO_IR, value);
}

/** `hasFunctionCall`: the candidate carried a functionCall part, so STOP means tool_calls. */
export function mapGeminiFinishReason(finishReason: string, hasFunctionCall: boolean): IrFinish {
  const reason = isGeminiFinishReason(finishReason) ? FINISH_REASON_TO_IR[finishReason] : "other";
  if (reason === "stop" && hasFunctionCall) return { reason: "tool_calls", raw: finishReason };
  return { reason, raw: finishReason };
}

/** Canonical finish -> `finishReason`; a raw Gemini value with the same meaning is kept verbatim. */
export function toGeminiFinishReason(finish: IrFinish | undefined): GeminiFinishReason {
  if (finish === undefined) return "STOP";
  const raw = finish.raw;
  if (raw !== undefined && isGeminiFinishReason(raw)) {
    const rawReason = FINISH_REASON_TO_IR[raw];
    if (rawReason === finish.reason || (finish.reason === "tool_calls" && raw === "STOP")) return raw;
  }
  return IR_TO_FINISH_REASON[finish.reason];
}
