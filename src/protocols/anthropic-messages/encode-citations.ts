import type { IrCitation, IrSealed, IrTextPart, IrWarning } from "../../ir";
import { citationSpan, UNCARRIED_CITATION } from "../shared/citations";
import { warnOnce } from "../shared/output-warnings";
import type { AnthropicTextBlock } from "./wire-types";

/**
 * An IR citation as a Messages text block's citation, or undefined (reported) when Messages
 * cannot carry it. A web page is a `web_search_result_location` whose `cited_text` is the
 * passage the provider quoted, else the answer text the citation spans. Its
 * `encrypted_index` is Anthropic's own, given back as it came (a client replays it to
 * Anthropic with its next turn); another vendor's citation has none and it cannot be
 * rebuilt, so it is sent as "" (request encoders send history text without citations, so a
 * replay through another upstream loses nothing by it). A document citation is Anthropic's own location, sent verbatim,
 * and has no meaning when another vendor made it.
 */
export function anthropicCitation(citation: IrCitation, partText: string, warnings: IrWarning[]): unknown {
  if (citation.document !== undefined) {
    if (citation.document.protocol === "anthropic-messages") return citation.document.raw;
    warnOnce(warnings, UNCARRIED_CITATION);
    return undefined;
  }
  if (citation.url === undefined) {
    warnOnce(warnings, UNCARRIED_CITATION);
    return undefined;
  }
  const span = citationSpan(citation, partText.length);
  return {
    type: "web_search_result_location",
    cited_text: citation.citedText ?? partText.slice(span.start, span.end),
    url: citation.url,
    title: citation.title ?? null,
    encrypted_index: anthropicSealed(citation.sealed),
  };
}

/**
 * A cited text part as Messages text blocks. Anthropic cites by block, and its own answers
 * come as uncited block, cited block, uncited block…; a citation of a span is written the
 * same way: the text is split where cited spans begin and end, each piece carrying the
 * citations that span it (a citation without a span, every piece). A piece that is only
 * whitespace and cites nothing joins the block before it (or after it, first): Anthropic
 * refuses whitespace-only text blocks when a client replays them.
 */
export function citedTextBlocks(part: IrTextPart, warnings: IrWarning[]): AnthropicTextBlock[] {
  const cited: Array<{ span: { start: number; end: number } | undefined; wire: unknown }> = [];
  for (const citation of part.citations ?? []) {
    const wire = anthropicCitation(citation, part.text, warnings);
    if (wire === undefined) continue;
    const spanned = citation.start !== undefined || citation.end !== undefined;
    cited.push({ span: spanned ? citationSpan(citation, part.text.length) : undefined, wire });
  }
  if (cited.length === 0) return [{ type: "text", text: part.text }];

  const cuts = new Set([0, part.text.length]);
  for (const { span } of cited) if (span !== undefined) cuts.add(span.start).add(span.end);
  const bounds = [...cuts].sort((a, b) => a - b);
  const blocks: AnthropicTextBlock[] = [];
  let leading = "";
  for (let i = 0; i + 1 < bounds.length; i++) {
    const start = bounds[i] as number;
    const end = bounds[i + 1] as number;
    const text = part.text.slice(start, end);
    const citations = cited.filter(({ span }) => span === undefined || (span.start <= start && end <= span.end)).map(({ wire }) => wire);
    const previous = blocks[blocks.length - 1];
    if (citations.length === 0 && text.trim() === "") {
      if (previous === undefined) leading += text;
      else previous.text += text;
      continue;
    }
    blocks.push(citations.length === 0 ? { type: "text", text: leading + text } : { citations, type: "text", text: leading + text });
    leading = "";
  }
  return blocks;
}

/** Anthropic's own opaque token, as it came; "" for anything else (another vendor's, or none). */
export function anthropicSealed(sealed: IrSealed | undefined): string {
  return sealed?.protocol === "anthropic-messages" ? sealed.value : "";
}
