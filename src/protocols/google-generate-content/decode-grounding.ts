import type { IrCitation, IrWarning, IrWebSearchPart, IrWebSearchResult } from "../../ir";
import { isRecord, type JsonObject } from "../shared/json-fields";
import { warnDroppedUpstream } from "../shared/output-warnings";
import { responseScopedId } from "./response-call-id";

/** What a candidate's grounding carries (readGrounding). */
export interface Grounding {
  /** The search, when the model ran one (`webSearchQueries`); URL context grounds without one. */
  search?: IrWebSearchPart;
  supports: GroundingSupport[];
}

/** A citation with the span Gemini gives it: UTF-8 byte offsets into a text, read by placeSupport. */
export interface GroundingSupport {
  citation: IrCitation;
  /** The candidate part it indexes; absent, the offsets count in the candidate's whole text. */
  partIndex?: number;
  startByte: number;
  endByte?: number;
  /** The chunk it cites, to tell a repeated support apart from a new one in a stream. */
  chunkIndex: number;
}

const CARRIED_FIELDS: ReadonlySet<string> = new Set(["webSearchQueries", "groundingChunks", "groundingSupports", "searchEntryPoint", "retrievalMetadata"]);

/**
 * A candidate's `groundingMetadata` (ai.google.dev/api/generate-content#GroundingMetadata,
 * ai.google.dev/gemini-api/docs/google-search) read into what the IR carries: the search
 * (`webSearchQueries`, with the `web` chunks as its pages) and one citation per support and
 * chunk it names (`groundingSupports[].groundingChunkIndices`). A chunk only listed is a
 * result, not a citation. `searchEntryPoint` (Google's rendered search chips) and
 * `retrievalMetadata` (a retrieval score) belong to the search and are not content; a chunk
 * of another kind (`retrievedContext` of file search, `maps`) or any other field is named in
 * `warnings`.
 */
export function readGrounding(metadata: JsonObject, responseId: string | undefined, warnings: IrWarning[]): Grounding {
  for (const key of Object.keys(metadata)) if (!CARRIED_FIELDS.has(key)) warnDroppedUpstream(warnings, key, "of the grounding metadata");
  const chunks = Array.isArray(metadata.groundingChunks) ? metadata.groundingChunks : [];
  const results: IrWebSearchResult[] = [];
  const pages: Array<IrWebSearchResult | undefined> = chunks.map((chunk) => {
    const web = isRecord(chunk) && isRecord(chunk.web) ? chunk.web : undefined;
    if (web === undefined || typeof web.uri !== "string" || web.uri === "") {
      if (isRecord(chunk)) warnDroppedUpstream(warnings, Object.keys(chunk)[0] ?? "groundingChunks", "grounding chunk");
      return undefined;
    }
    const page: IrWebSearchResult = { url: web.uri };
    if (typeof web.title === "string" && web.title !== "") page.title = web.title;
    results.push(page);
    return page;
  });
  const grounding: Grounding = { supports: readSupports(metadata.groundingSupports, pages) };
  const queries = Array.isArray(metadata.webSearchQueries) ? metadata.webSearchQueries.filter((query): query is string => typeof query === "string" && query !== "") : [];
  if (queries.length > 0) grounding.search = { type: "web_search", id: responseScopedId("ws", responseId, 0), queries, results };
  return grounding;
}

function readSupports(raw: unknown, pages: ReadonlyArray<IrWebSearchResult | undefined>): GroundingSupport[] {
  const supports: GroundingSupport[] = [];
  if (!Array.isArray(raw)) return supports;
  for (const support of raw) {
    if (!isRecord(support) || !isRecord(support.segment) || !Array.isArray(support.groundingChunkIndices)) continue;
    const segment = support.segment;
    for (const chunkIndex of support.groundingChunkIndices) {
      const page = typeof chunkIndex === "number" ? pages[chunkIndex] : undefined;
      if (page === undefined) continue; // a chunk of another kind, named above
      const citation: IrCitation = { ...page };
      if (typeof segment.text === "string" && segment.text !== "") citation.citedText = segment.text;
      const read: GroundingSupport = { citation, startByte: byteOffset(segment.startIndex) ?? 0, chunkIndex: chunkIndex as number };
      const endByte = byteOffset(segment.endIndex);
      if (endByte !== undefined) read.endByte = endByte;
      const partIndex = byteOffset(segment.partIndex);
      if (partIndex !== undefined) read.partIndex = partIndex;
      supports.push(read);
    }
  }
  return supports;
}

/** Gemini omits a zero (proto3 JSON), so an absent `startIndex` is 0. */
function byteOffset(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
}

/**
 * The support's citation with its span as JavaScript string indices into `text` (the text its
 * byte offsets count in), shifted by `shift`. Gemini's offsets count UTF-8 bytes; a span that
 * does not hold the segment's text (an upstream counting otherwise) is looked up by that
 * text instead, and without a match the citation has no span.
 */
export function placeSupport(support: GroundingSupport, text: string, shift = 0): IrCitation {
  const citation: IrCitation = { ...support.citation };
  const cited = citation.citedText;
  let start = indexOfByte(text, support.startByte);
  let end = support.endByte === undefined ? undefined : indexOfByte(text, support.endByte);
  if (cited !== undefined && (start === undefined || end === undefined || text.slice(start, end) !== cited)) {
    const found = text.indexOf(cited);
    start = found < 0 ? undefined : found;
    end = found < 0 ? undefined : found + cited.length;
  }
  if (start !== undefined && end !== undefined && start <= end) {
    citation.start = start + shift;
    citation.end = end + shift;
  }
  return citation;
}

/** The string index at UTF-8 byte `offset` of `text`, or undefined past its end or inside a character. */
export function indexOfByte(text: string, offset: number): number | undefined {
  let bytes = 0;
  let index = 0;
  while (bytes < offset && index < text.length) {
    const code = text.codePointAt(index) as number;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    index += code >= 0x10000 ? 2 : 1;
  }
  return bytes === offset ? index : undefined;
}

export function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // A surrogate pair is one 4-byte character: 2 bytes for each half.
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code <= 0xdfff ? 2 : 3;
  }
  return bytes;
}
