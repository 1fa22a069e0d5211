import type { IrCitation, IrWarning } from "../../ir";
import { readUrlCitations } from "../openai-shared/url-citation";
import { warnDroppedUpstream } from "../shared/output-warnings";

/**
 * An output item the IR has no place for, other than `reasoning`, `message`, `function_call`,
 * `web_search_call` (web-search-call.ts) and the actions the client must take
 * (client-actions.ts): a hosted tool the provider ran (`file_search_call`,
 * `code_interpreter_call`, `image_generation_call`, `mcp_call`, `mcp_list_tools`, `tool_search_call` and its `tool_search_output`, xAI's
 * `x_search_call`, …) or any item type not known here
 * (platform.openai.com/docs/api-reference/responses/object#output). Named in `warnings`,
 * once per type. An `mcp_approval_request` is not named: answered, it is part of the
 * `mcp_call` that follows it (named); unanswered, the answer is refused.
 */
export function warnDroppedItem(warnings: IrWarning[], type: unknown): void {
  if (type !== "mcp_approval_request") warnDroppedUpstream(warnings, type, "output item");
}

/**
 * An output text part's `url_citation` annotations, indexed into its text; any other
 * annotation (`file_citation`, `container_file_citation`, `file_path`) is named in `warnings`
 * as `annotations`.
 */
export function readOutputTextCitations(part: Record<string, unknown>, warnings: IrWarning[]): IrCitation[] {
  return readUrlCitations(part.annotations, warnings, "on output text");
}
