import type { IrCitation, IrWarning } from "../../ir";
import { warnDroppedUpstream } from "../shared/output-warnings";
import { isRecord, type JsonObject } from "./read-fields";

/**
 * An OpenAI `url_citation` annotation -> IrCitation, or undefined for any other annotation
 * (`file_citation`, `container_file_citation`, `file_path`, …), which the caller names as
 * dropped. Chat nests the fields in `url_citation`
 * (platform.openai.com/docs/api-reference/chat/object: `{type, url_citation: {url, title,
 * start_index, end_index}}`); Responses has them flat
 * (platform.openai.com/docs/api-reference/responses/object: `{type, url, title, start_index,
 * end_index}`). Indices are kept as the upstream wrote them, relative to the text it
 * annotates; the caller moves them into its text part. xAI writes no indices: the citation
 * then has no span.
 */
export function readUrlCitation(annotation: unknown): IrCitation | undefined {
  if (!isRecord(annotation) || annotation.type !== "url_citation") return undefined;
  const fields: JsonObject = isRecord(annotation.url_citation) ? annotation.url_citation : annotation;
  if (typeof fields.url !== "string" || fields.url === "") return undefined;
  const citation: IrCitation = { url: fields.url };
  if (typeof fields.title === "string" && fields.title !== "") citation.title = fields.title;
  const start = fields.start_index;
  const end = fields.end_index;
  if (Number.isSafeInteger(start) && Number.isSafeInteger(end) && (start as number) >= 0 && (start as number) <= (end as number)) {
    citation.start = start as number;
    citation.end = end as number;
  }
  return citation;
}

/**
 * The `url_citation`s of an `annotations` list (anything but an array: none), each read by
 * readUrlCitation; any other annotation is named in `warnings` as `annotations`, found
 * `where` ("on the message", "on output text"). An empty list returns and names nothing.
 */
export function readUrlCitations(annotations: unknown, warnings: IrWarning[], where: string): IrCitation[] {
  if (!Array.isArray(annotations)) return [];
  const citations: IrCitation[] = [];
  for (const annotation of annotations) {
    const citation = readUrlCitation(annotation);
    if (citation !== undefined) citations.push(citation);
    else warnDroppedUpstream(warnings, "annotations", where);
  }
  return citations;
}

/**
 * `citation` with its span moved by `shift` (where the annotated text begins in the IR text
 * part) and checked against the part's `length`: a span outside the part is dropped, so the
 * citation cites the whole part rather than text that is not there.
 */
export function placeCitation(citation: IrCitation, shift: number, length: number): IrCitation {
  if (citation.start === undefined || citation.end === undefined) return citation;
  const start = citation.start + shift;
  const end = citation.end + shift;
  const placed: IrCitation = { ...citation };
  delete placed.start;
  delete placed.end;
  if (start >= 0 && end <= length) {
    placed.start = start;
    placed.end = end;
  }
  return placed;
}
