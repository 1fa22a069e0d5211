/**
 * Responses output items that ask the client to act, other than `function_call`: the
 * hosted tools the client runs itself (a shell, a patch, a computer, a custom free-form
 * tool) and MCP approvals it must answer. No other wire has a place for them, and a
 * `function_call` would misstate them (their inputs are not JSON arguments of a function the
 * client declared), so the IR carries only their name: a translation refuses the answer
 * instead of delivering it empty (src/protocols/README.md, "Actions the client must take").
 */
export const CLIENT_ACTION_ITEMS: ReadonlySet<string> = new Set([
  "local_shell_call",
  "shell_call",
  "apply_patch_call",
  "computer_call",
  "custom_tool_call",
]);

/**
 * An `mcp_approval_request` asks the client to approve an MCP call, unless the same answer
 * already carries the `mcp_call` that followed it (`approval_request_id`): only one left
 * unanswered is an action the client must take. Tracks them across an answer's items.
 */
export class PendingApprovals {
  private readonly pending = new Set<string>();

  onItem(item: { type?: unknown; id?: unknown; approval_request_id?: unknown }): void {
    if (item.type === "mcp_approval_request" && typeof item.id === "string") this.pending.add(item.id);
    else if (item.type === "mcp_call" && typeof item.approval_request_id === "string") this.pending.delete(item.approval_request_id);
  }

  /** "mcp_approval_request" when one is still unanswered. */
  unanswered(): string | undefined {
    return this.pending.size > 0 ? "mcp_approval_request" : undefined;
  }
}
