import type { IrReasoningPart } from "../../ir";
import { isRecord } from "../openai-shared/read-fields";

/**
 * A Responses reasoning item can only be replayed with its `id` (and, for stateless use,
 * its `encrypted_content`). The IR has no slot for either, so both ride in the reasoning
 * part's `signature`, marked `signatureProtocol: "openai-responses"` so no other encoder
 * ever sends it. The format is private to this codec.
 */
export interface ReasoningItemRef {
  id: string;
  encryptedContent?: string;
}

export function packReasoningRef(ref: ReasoningItemRef): string {
  return JSON.stringify(ref.encryptedContent === undefined ? { id: ref.id } : { id: ref.id, encrypted_content: ref.encryptedContent });
}

export function unpackReasoningRef(part: IrReasoningPart): ReasoningItemRef | undefined {
  if (part.signatureProtocol !== "openai-responses" || part.signature === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(part.signature);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || typeof value.id !== "string") return undefined;
  return typeof value.encrypted_content === "string" ? { id: value.id, encryptedContent: value.encrypted_content } : { id: value.id };
}

/** Builds the IR part for a reasoning item, attaching the ref when the item has an id. */
export function reasoningPart(text: string, id: unknown, encryptedContent: unknown): IrReasoningPart {
  const part: IrReasoningPart = { type: "reasoning", text };
  if (typeof id === "string" && id !== "") {
    const ref: ReasoningItemRef = { id };
    if (typeof encryptedContent === "string" && encryptedContent !== "") ref.encryptedContent = encryptedContent;
    part.signature = packReasoningRef(ref);
    part.signatureProtocol = "openai-responses";
  }
  return part;
}

/** Reasoning text of an item: its summary paragraphs, else its raw `reasoning_text` content. */
export function reasoningTextOf(item: Record<string, unknown>): string {
  const summary = textsOf(item.summary, "summary_text");
  return summary.length > 0 ? summary.join(SUMMARY_SEPARATOR) : textsOf(item.content, "reasoning_text").join("");
}

/** Summary parts are separate paragraphs; the stream decoder inserts the same separator. */
export const SUMMARY_SEPARATOR = "\n\n";

function textsOf(value: unknown, type: string): string[] {
  if (!Array.isArray(value)) return [];
  const texts: string[] = [];
  for (const entry of value) if (isRecord(entry) && entry.type === type && typeof entry.text === "string") texts.push(entry.text);
  return texts;
}
