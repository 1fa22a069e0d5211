import type { IrWarning } from "../../ir";
import { warnDroppedUpstream } from "../shared/output-warnings";

/**
 * An output item the IR has no place for, other than `reasoning`, `message`, `function_call`
 * and the actions the client must take (client-actions.ts): a hosted tool the provider ran
 * (`web_search_call`, `file_search_call`, `code_interpreter_call`, `image_generation_call`,
 * `mcp_call`, `mcp_list_tools`, `tool_search_call` and its `tool_search_output`, xAI's
 * `x_search_call`, …) or any item type not known here
 * (platform.openai.com/docs/api-reference/responses/object#output). Named in `warnings`,
 * once per type. An `mcp_approval_request` is not named: answered, it is part of the
 * `mcp_call` that follows it (named); unanswered, the answer is refused.
 */
export function warnDroppedItem(warnings: IrWarning[], type: unknown): void {
  if (type !== "mcp_approval_request") warnDroppedUpstream(warnings, type, "output item");
}
