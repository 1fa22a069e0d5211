import type { IrContentPart, IrRequest } from "../ir";

/** The usage estimator: 4 characters per token, rounded up. Versioned, because records say which estimator priced them. */
export const ESTIMATOR = { chars_per_token: 4, version: "chars4-v1" } as const;

export function tokensFromChars(chars: number): number {
  return Math.ceil(chars / ESTIMATOR.chars_per_token);
}

function partChars(part: IrContentPart): number {
  switch (part.type) {
    case "text":
    case "reasoning":
      return part.text.length;
    case "tool_call":
      return part.name.length + part.arguments.length;
    case "tool_result":
      return typeof part.output === "string"
        ? part.output.length
        : part.output.reduce((sum, inner) => sum + (inner.type === "text" ? inner.text.length : 0), 0);
    default:
      return 0; // media is not counted by characters
  }
}

/** Prompt characters: system + every message's text, reasoning, tool-call names and arguments, tool results. */
export function promptChars(request: IrRequest): number {
  let chars = request.system?.length ?? 0;
  for (const message of request.messages) for (const part of message.content) chars += partChars(part);
  return chars;
}
