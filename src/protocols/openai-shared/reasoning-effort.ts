import type { IrReasoningEffort, IrWarning, ProtocolId } from "../../ir";

/**
 * OpenAI accepts `none | minimal | low | medium | high | xhigh` for `reasoning_effort` and
 * `reasoning.effort` (platform.openai.com/docs/api-reference/chat/create). Anthropic's
 * `max` has no OpenAI value; `xhigh` is the nearest and the warning records the change.
 */
export function toOpenAiEffort(effort: IrReasoningEffort, field: string, target: ProtocolId, warnings: IrWarning[]): string {
  if (effort !== "max") return effort;
  warnings.push({ code: "lossy_field", field, message: `reasoning effort "max" is not supported by ${target}; sent as "xhigh"` });
  return "xhigh";
}
