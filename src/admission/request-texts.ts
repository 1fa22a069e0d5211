import type { IrRequest } from "../ir";

/**
 * The texts of a request that request-side content patterns scan, one piece at a time:
 * the system prompt, then each message's text, reasoning, tool-call arguments and tool
 * results, in order. Lazy, so that a request whose guardrail has no block pattern never
 * walks its messages, and iterative (the IR's nesting is fixed: message, part, result
 * part), so a deep or long conversation costs no stack. Images, files, signatures and
 * redacted reasoning are opaque data, not text a pattern could judge.
 */
export function* requestTexts(request: IrRequest): Generator<string, void, undefined> {
  if (request.system) yield request.system;
  for (const message of request.messages) {
    for (const part of message.content) {
      switch (part.type) {
        case "text":
        case "reasoning":
          if (part.text) yield part.text;
          break;
        case "tool_call":
          if (part.arguments) yield part.arguments;
          break;
        case "tool_result":
          if (typeof part.output === "string") {
            if (part.output) yield part.output;
          } else {
            for (const inner of part.output) if (inner.type === "text" && inner.text) yield inner.text;
          }
          break;
        case "image":
        case "file":
          break;
      }
    }
  }
}
