import { IrDecodeError, type IrContentPart, type IrResponse, type IrWarning } from "../../ir";
import { argumentsText, isRecord } from "../openai-shared/read-fields";
import { attachCitations, readAnnotations, readAnswerContent, warnDroppedMessageFields } from "./decode-answer-content";
import { warnDroppedUpstream } from "../shared/output-warnings";
import { decodeChatUsage } from "./convert-usage";
import { decodeChatFinishReason } from "./map-finish-reason";

/**
 * Upstream `chat.completion` -> IrResponse (platform.openai.com/docs/api-reference/chat/object).
 * Only `choices[0]` is read: Switchyard never forwards `n > 1` semantics across protocols,
 * so the other choices are named in `warnings` (`output.choices`), as are Groq's
 * `executed_tools` and annotations other than `url_citation`. The `url_citation`s become the
 * citations of the text they annotate.
 * Reasoning comes from `reasoning_content` (DeepSeek), `reasoning` (OpenRouter, vLLM),
 * `thinking`, or the `thinking` parts of a content array (Mistral: decode-answer-content.ts,
 * whose other part types are dropped with a warning). A refusal becomes text and finishes
 * as `content_filter`.
 */
export function decodeChatResponse(body: unknown): IrResponse {
  if (!isRecord(body) || !Array.isArray(body.choices)) {
    throw new IrDecodeError("upstream body is not a chat completion (no choices array)");
  }
  const choice: unknown = body.choices[0];
  const message = isRecord(choice) && isRecord(choice.message) ? choice.message : {};
  const content: IrContentPart[] = [];
  const warnings: IrWarning[] = [];

  const reasoning = firstString(message.reasoning_content, message.reasoning, message.thinking);
  if (reasoning !== undefined) content.push({ type: "reasoning", text: reasoning });
  const pieces = readAnswerContent(message.content, warnings);
  attachCitations(pieces, readAnnotations(message, warnings), warnings);
  for (const piece of pieces) {
    if (piece.kind === "reasoning") content.push({ type: "reasoning", text: piece.text });
    else content.push(piece.citations === undefined ? { type: "text", text: piece.text } : { type: "text", text: piece.text, citations: piece.citations });
  }
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined;
  if (refusal !== undefined) content.push({ type: "text", text: refusal });
  warnDroppedMessageFields(message, warnings);
  if (body.choices.length > 1) warnDroppedUpstream(warnings, "choices", "after the first");

  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((value: unknown, index: number) => {
      if (!isRecord(value) || !isRecord(value.function)) return;
      const name = value.function.name;
      if (typeof name !== "string") return;
      // A few compatible providers omit ids; a positional id keeps results matchable.
      const id = typeof value.id === "string" && value.id !== "" ? value.id : `call_${index}`;
      content.push({ type: "tool_call", id, name, arguments: argumentsText(value.function.arguments) });
    });
  }

  const finish = decodeChatFinishReason(isRecord(choice) ? choice.finish_reason : undefined);
  const response: IrResponse = {
    content,
    finish: refusal !== undefined ? { ...finish, reason: "content_filter" } : finish,
  };
  if (typeof body.id === "string") response.id = body.id;
  if (typeof body.model === "string") response.model = body.model;
  const usage = decodeChatUsage(body.usage);
  if (usage !== undefined) response.usage = usage;
  if (warnings.length > 0) response.warnings = warnings;
  return response;
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === "string" && value !== "") return value;
  return undefined;
}
