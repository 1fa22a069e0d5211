import type { IrCitation, IrWarning, IrWebSearchPart } from "../../ir";
import { placeCitations } from "../shared/citations";
import { droppedOutput, warnOnce } from "../shared/output-warnings";

interface GroundingSupport {
  segment: { startIndex: number; endIndex: number; text: string };
  groundingChunkIndices: number[];
}

/**
 * An answer's web citations and searches as a candidate's `groundingMetadata`
 * (ai.google.dev/api/generate-content#GroundingMetadata): each cited or found page is one
 * `groundingChunks[].web` (one per URL), each cited span a `groundingSupports[]` entry
 * pointing at its chunks, and the queries run `webSearchQueries`. A segment's indices are
 * UTF-8 byte offsets into the candidate's answer text (its text parts joined, thoughts
 * left out), as Gemini's own are, not JavaScript string indices; citations of one span share
 * one support, as Gemini writes them.
 */
export class GroundingMetadataBuilder {
  private readonly chunks: Array<{ web: { uri: string; title?: string } }> = [];
  private readonly chunkIndexes = new Map<string, number>();
  private readonly supports = new Map<string, GroundingSupport>();
  private readonly queries: string[] = [];

  constructor(private readonly warnings: IrWarning[]) {}

  /** The citations of a text part that starts at byte `byteOffset` of the answer text. */
  addCitations(citations: readonly IrCitation[] | undefined, partText: string, byteOffset: number): void {
    for (const citation of placeCitations(citations, 0, partText, this.warnings)) {
      const startIndex = byteOffset + utf8Length(partText.slice(0, citation.start));
      const text = partText.slice(citation.start, citation.end);
      const endIndex = startIndex + utf8Length(text);
      const key = `${startIndex}:${endIndex}`;
      let support = this.supports.get(key);
      if (support === undefined) this.supports.set(key, (support = { segment: { startIndex, endIndex, text }, groundingChunkIndices: [] }));
      const chunk = this.chunk(citation.url, citation.title);
      if (!support.groundingChunkIndices.includes(chunk)) support.groundingChunkIndices.push(chunk);
    }
  }

  /** A search's queries and the pages it found (chunks no support needs to point at). */
  addSearch(search: IrWebSearchPart): void {
    this.queries.push(...search.queries);
    for (const result of search.results) this.chunk(result.url, result.title);
    if (search.errorCode !== undefined) warnOnce(this.warnings, FAILED_SEARCH);
  }

  /** The metadata, or undefined when the answer cites and searched nothing. */
  build(): Record<string, unknown> | undefined {
    if (this.chunks.length === 0 && this.queries.length === 0) return undefined;
    const metadata: Record<string, unknown> = {};
    if (this.chunks.length > 0) metadata.groundingChunks = this.chunks;
    if (this.supports.size > 0) metadata.groundingSupports = [...this.supports.values()];
    if (this.queries.length > 0) metadata.webSearchQueries = this.queries;
    return metadata;
  }

  private chunk(uri: string, title: string | undefined): number {
    const known = this.chunkIndexes.get(uri);
    if (known !== undefined) return known;
    const index = this.chunks.length;
    this.chunks.push({ web: title === undefined ? { uri } : { uri, title } });
    this.chunkIndexes.set(uri, index);
    return index;
  }
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Grounding names the queries a search ran, not whether it failed. */
const FAILED_SEARCH = droppedOutput("web_search", "a failed web search's error has no place in Gemini grounding metadata; its queries are sent");
