import type { IrContentPart, IrRequest } from "../ir";

/**
 * The usage estimator, for usage an upstream never reported: an upper bound, never an
 * average (src/metering/README.md, "What an upstream call is charged"). One token per UTF-8
 * byte of what the upstream tokenized or produced (no upstream tokenizer makes more), the
 * prompt by admission's prompt ceiling, the completion capped at the request's output
 * ceiling. Versioned, because records say which estimator priced them; `chars_per_token`
 * counts characters as UTF-8 bytes. (chars4-v1, before: 4 characters a token, which
 * undercounted CJK, emoji and base64 several times over, and left tools, schemas and media
 * out of the prompt.)
 */
export const ESTIMATOR = { chars_per_token: 1, version: "utf8-bytes-v2" } as const;

/** Characters per token for ranking candidates by expected cost (plan-attempts.ts) and the count-tokens answer: a typical ratio, not a bound. */
const TYPICAL_CHARS_PER_TOKEN = 4;

export function tokensFromChars(chars: number): number {
  return Math.ceil(chars / TYPICAL_CHARS_PER_TOKEN);
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

/** Prompt characters (for ranking, not billing): system + every message's text, reasoning, tool-call names and arguments, tool results. */
export function promptChars(request: IrRequest): number {
  let chars = request.system?.length ?? 0;
  for (const message of request.messages) for (const part of message.content) chars += partChars(part);
  return chars;
}
