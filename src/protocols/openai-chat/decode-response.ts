import { IrDecodeError, type IrContentPart, type IrResponse } from "../../ir";
import { argumentsText, isRecord } from "../openai-shared/read-fields";
import { decodeChatUsage } from "./convert-usage";
import { decodeChatFinishReason } from "./map-finish-reason";

/**
 * Upstream `chat.completion` -> IrResponse (platform.openai.com/docs/api-reference/chat/object).
 * Only `choices[0]` is read: Switchyard never forwards `n > 1` semantics across protocols.
 * Reasoning comes from `reasoning_content` (DeepSeek), `reasoning` (OpenRouter, vLLM) or
 * `thinking`. A refusal becomes text and finishes as `content_filter`.
 */
export function decodeChatResponse(body: unknown): IrResponse {
  if (!isRecord(body) || !Array.isArray(body.choices)) {
    throw new IrDecodeError("upstream body is not a chat completion (no choices array)");
  }
  const choice: unknown = body.choices[0];
  const message = isRecord(choice) && isRecord(choice.message) ? choice.message : {};
  const content: IrContentPart[] = [];

  const reasoning = firstString(message.reasoning_content, message.reasoning, message.thinking);
  if (reasoning !== undefined) content.push({ type: "reasoning", text: reasoning });
  const text = textOf(message.content);
  if (text !== "") content.push({ type: "text", text });
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined;
  if (refusal !== undefined) content.push({ type: "text", text: refusal });

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
  return response;
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) if (typeof value === "string" && value !== "") return value;
  return undefined;
}

/** `content` is a string, null, or (for some compatible providers) an array of text parts. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) if (isRecord(part) && typeof part.text === "string") text += part.text;
  return text;
}
