import type { IrFinish } from "../../ir";

/**
 * Responses `status` (+ `incomplete_details.reason`) <-> canonical finish
 * (platform.openai.com/docs/api-reference/responses/object). Responses has no tool-call stop
 * reason: a completed response that contains function calls finishes as `tool_calls`.
 */
export function decodeResponsesStatus(
  status: unknown,
  incompleteReason: unknown,
  flags: { hasToolCalls: boolean; refusal: boolean },
): IrFinish {
  switch (status) {
    case "completed":
      if (flags.refusal) return { reason: "content_filter", raw: "completed" };
      return { reason: flags.hasToolCalls ? "tool_calls" : "stop", raw: "completed" };
    case "incomplete":
      if (incompleteReason === "max_output_tokens") return { reason: "length", raw: "max_output_tokens" };
      if (incompleteReason === "content_filter") return { reason: "content_filter", raw: "content_filter" };
      return { reason: "other", raw: typeof incompleteReason === "string" ? incompleteReason : "incomplete" };
    case "failed":
      return { reason: "error", raw: "failed" };
    default:
      return typeof status === "string" ? { reason: "other", raw: status } : { reason: "other" };
  }
}

export interface ResponsesStatus {
  status: "completed" | "incomplete" | "failed";
  incompleteReason?: "max_output_tokens" | "content_filter";
}

/**
 * A content filter that cut the output short is `incomplete` with reason `content_filter`
 * (what OpenAI itself reports); a model that politely refused (`completed` refusal from
 * Responses, Anthropic `refusal`) finished normally and stays `completed`.
 */
export function encodeResponsesStatus(finish: IrFinish | undefined): ResponsesStatus {
  switch (finish?.reason) {
    case "length":
      return { status: "incomplete", incompleteReason: "max_output_tokens" };
    case "content_filter":
      return finish.raw === "completed" || finish.raw === "refusal"
        ? { status: "completed" }
        : { status: "incomplete", incompleteReason: "content_filter" };
    case "error":
      return { status: "failed" };
    default:
      return { status: "completed" };
  }
}
