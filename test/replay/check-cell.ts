/**
 * What a user expects of one cell (a recording replayed to one client protocol), as named
 * aspects: each check gives `undefined` when the client and the request record got what the
 * recording says, or what went wrong. Known gaps are kept per aspect (known-gaps.ts), so a
 * cell with one gap still holds every other aspect.
 *
 * A same-protocol cell is relayed as is: it must carry everything of the answer, in the
 * vendor's own usage convention, so its client-side usage is not compared (its record is).
 */
import type { ClientName } from "../policy-enforcement/enforcement-support";
import type { UpstreamProtocol } from "../support/mock-upstreams";
import { handCharge } from "../metering/metering-support";
import type { ClientView } from "./clients/client-view";
import type { CitationKind, ExpectedAnswer, Finish } from "./expected/expected-answer";
import type { Recording } from "./recording";
import { REPLAY_PRICING } from "./replay-catalog";

export const ASPECTS = [
  "error",
  "hosted-call",
  "answer",
  "text",
  "tool-calls",
  "finish",
  "usage",
  "reasoning",
  "redacted-reasoning",
  "server-tools",
  "citations",
  "record",
  "record-tokens",
  "record-charge",
  "wire-charge",
] as const;
export type Aspect = (typeof ASPECTS)[number];

export interface CellOutcome {
  recording: Recording;
  client: ClientName;
  expected: ExpectedAnswer;
  view: ClientView;
  /** The request records with the cell's request id (normally one). */
  records: any[];
}

/** Each client's words for a finish (https links in the readers name the vendors' lists). */
const FINISH_WORDS: Readonly<Record<ClientName, Readonly<Record<Finish, readonly string[]>>>> = {
  "openai-chat": { stop: ["stop"], length: ["length"], tool_calls: ["tool_calls"], content_filter: ["content_filter"], error: [], other: ["stop"] },
  "openai-responses": {
    stop: ["completed"],
    length: ["incomplete:max_output_tokens"],
    tool_calls: ["completed"],
    // A refusal is either filtered output or a completed answer whose content is the refusal.
    content_filter: ["incomplete:content_filter", "completed"],
    error: ["failed"],
    other: ["completed"],
  },
  "anthropic-messages": {
    stop: ["end_turn", "stop_sequence"],
    length: ["max_tokens", "model_context_window_exceeded"],
    tool_calls: ["tool_use"],
    content_filter: ["refusal"],
    error: [],
    other: ["end_turn", "pause_turn"],
  },
  "google-generate-content": {
    stop: ["STOP"],
    length: ["MAX_TOKENS"],
    tool_calls: ["STOP"],
    content_filter: ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"],
    error: [],
    other: ["OTHER", "STOP"],
  },
};

/** What the protocols' warnings name, by what was dropped (src/protocols/README.md: `code:output.<kind>`). */
const WARNED: Readonly<Record<"reasoning" | "redacted", RegExp>> = {
  reasoning: /dropped_content:output\.reasoning\b/,
  redacted: /dropped_content:output\.redacted_reasoning\b/,
};

/**
 * A server tool or citation skipped by the upstream's decoder is named by what the decoder
 * skipped, in the upstream's own words (`dropped_content:output.<kind>`): Anthropic's block
 * type (a tool it ran: its `server_tool_use` block or the block of its own type; an MCP call:
 * `mcp_tool_use`), the Responses item type, Gemini's part or candidate field, Groq's
 * `executed_tools`. Each server tool of the recording must be named by one of its fields.
 */
const GEMINI_SERVER_TOOL_FIELDS: Readonly<Record<string, string>> = {
  code_execution: "executableCode",
  google_search: "groundingMetadata",
  url_context: "urlContextMetadata",
};
const SERVER_TOOL_FIELDS: Readonly<Record<UpstreamProtocol, (kind: string) => string[]>> = {
  "anthropic-messages": (kind) => (kind.startsWith("mcp:") ? ["mcp_tool_use"] : ["server_tool_use", kind]),
  "openai-responses": (kind) => [kind],
  "google-generate-content": (kind) => [GEMINI_SERVER_TOOL_FIELDS[kind] ?? kind],
  "openai-chat": () => ["executed_tools"],
};
const droppedAs = (fields: string[]) => fields.map((field) => `dropped_content:output.${field}`);

/**
 * A web search the provider ran is carried where the client's protocol has a place for it,
 * under the client's own name (what its view lists): a Responses `web_search_call` item, a
 * Messages `server_tool_use` named `web_search` with its results, Gemini grounding's
 * `webSearchQueries`. Chat has none: the search is named in a warning (its citations are
 * still carried as annotations).
 */
const WEB_SEARCH_KINDS: ReadonlySet<string> = new Set(["web_search", "web_search_call", "google_search"]);
const WEB_SEARCH_AS: Readonly<Record<ClientName, string | undefined>> = {
  "openai-chat": undefined,
  "openai-responses": "web_search_call",
  "anthropic-messages": "web_search",
  "google-generate-content": "google_search",
};
const WEB_SEARCH_DROPPED = "dropped_content:output.web_search";

/**
 * Where a citation that the client's protocol cannot carry is named, by its kind (a page
 * a search found rides with the search, so it is named with it). A web citation has a
 * place in every protocol (chat and Responses `url_citation`, Messages
 * `web_search_result_location`, Gemini grounding) and must be carried.
 */
const CITATION_DROPPED: Readonly<Record<Exclude<CitationKind, "web">, (protocol: UpstreamProtocol) => string>> = {
  found: () => WEB_SEARCH_DROPPED,
  file: () => "dropped_content:output.annotations",
  document: (protocol) => (protocol === "google-generate-content" ? "dropped_content:output.groundingMetadata" : "dropped_content:output.citations"),
  "read-page": () => "dropped_content:output.urlContextMetadata",
};

const json = (value: unknown) => JSON.stringify(value);
const squeeze = (text: string) => text.replace(/\s+/g, "");

/** The warnings of the cell, as `code:field`: the record's, and for a whole answer its header's too. */
function warningsOf(outcome: CellOutcome): { record: string[]; header: string | null } {
  const record = (outcome.records[0]?.warnings ?? []).map((warning: any) => (warning.field ? `${warning.code}:${warning.field}` : warning.code));
  return { record, header: outcome.view.warningsHeader };
}

/** Undefined when the drop is named where the client and the record can see it. */
function warned(outcome: CellOutcome, pattern: RegExp, what: string): string | undefined {
  return warnedAs(outcome, [(warning) => pattern.test(warning)], what);
}

/** Undefined when each of `named` is met by a warning of the record, and for a whole answer by one of its header. */
function warnedAs(outcome: CellOutcome, named: ReadonlyArray<(warning: string) => boolean>, what: string): string | undefined {
  const { record, header } = warningsOf(outcome);
  if (!named.every((test) => record.some(test))) return `${what}, and the record's warnings ${json(record)} do not say so`;
  const inHeader = (header ?? "").split(", ");
  if (outcome.recording.mode === "sync" && !named.every((test) => inHeader.some(test))) return `${what}, and x-switchyard-warnings (${json(header)}) does not say so`;
  return undefined;
}

/** One test per dropped kind: a warning that is one of its names. */
function namedAs(kinds: string[], fieldsOf: (kind: string) => string[]): Array<(warning: string) => boolean> {
  return [...new Set(kinds)].map((kind) => {
    const names = droppedAs(fieldsOf(kind));
    return (warning: string) => names.includes(warning);
  });
}

function checkUsage(outcome: CellOutcome): string | undefined {
  const usage = outcome.expected.usage;
  const seen = outcome.view.usage;
  if (usage === undefined) return undefined;
  if (seen === undefined) return "the answer carries no usage";
  const cacheRead = usage.cacheRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const want: Array<[string, unknown, number | undefined]> = [];
  switch (outcome.client) {
    case "openai-chat":
      want.push(["prompt_tokens", seen.prompt_tokens, usage.prompt], ["completion_tokens", seen.completion_tokens, usage.completion]);
      if (usage.reasoning !== undefined) want.push(["completion_tokens_details.reasoning_tokens", seen.completion_tokens_details?.reasoning_tokens, usage.reasoning]);
      if (cacheRead > 0) want.push(["prompt_tokens_details.cached_tokens", seen.prompt_tokens_details?.cached_tokens, cacheRead]);
      break;
    case "openai-responses":
      want.push(["input_tokens", seen.input_tokens, usage.prompt], ["output_tokens", seen.output_tokens, usage.completion]);
      if (usage.reasoning !== undefined) want.push(["output_tokens_details.reasoning_tokens", seen.output_tokens_details?.reasoning_tokens, usage.reasoning]);
      if (cacheRead > 0) want.push(["input_tokens_details.cached_tokens", seen.input_tokens_details?.cached_tokens, cacheRead]);
      break;
    case "anthropic-messages":
      // Anthropic's input_tokens leaves the cache out.
      want.push(
        ["input_tokens", seen.input_tokens, usage.prompt === undefined ? undefined : usage.prompt - cacheRead - cacheWrite],
        ["output_tokens", seen.output_tokens, usage.completion],
      );
      if (cacheRead > 0) want.push(["cache_read_input_tokens", seen.cache_read_input_tokens, cacheRead]);
      if (cacheWrite > 0) want.push(["cache_creation_input_tokens", seen.cache_creation_input_tokens, cacheWrite]);
      break;
    case "google-generate-content":
      // Gemini's candidates leave the thoughts out.
      want.push(
        ["promptTokenCount", seen.promptTokenCount, usage.prompt],
        ["candidatesTokenCount", seen.candidatesTokenCount ?? 0, usage.completion === undefined ? undefined : usage.completion - (usage.reasoning ?? 0)],
      );
      if ((usage.reasoning ?? 0) > 0) want.push(["thoughtsTokenCount", seen.thoughtsTokenCount, usage.reasoning]);
      if (cacheRead > 0) want.push(["cachedContentTokenCount", seen.cachedContentTokenCount, cacheRead]);
      break;
  }
  const wrong = want.filter(([, got, expected]) => expected !== undefined && got !== expected).map(([field, got, expected]) => `${field} ${json(got)}, expected ${expected}`);
  return wrong.length === 0 ? undefined : `usage ${wrong.join("; ")}`;
}

/** The charge of the recording's usage at the catalog's prices (µUSD), as metering must compute it. */
export function expectedCharge(expected: ExpectedAnswer): number | undefined {
  const usage = expected.usage;
  if (usage?.prompt === undefined || usage.completion === undefined) return undefined;
  const cacheRead = usage.cacheRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const reasoning = usage.reasoning ?? 0;
  return handCharge(REPLAY_PRICING, {
    uncachedInput: usage.prompt - cacheRead - cacheWrite,
    cacheRead,
    cacheWrite,
    output: usage.completion - reasoning,
    reasoning,
  });
}

function checkRecord(outcome: CellOutcome, results: Map<Aspect, string | undefined>): void {
  const { records, expected } = outcome;
  if (records.length !== 1) {
    results.set("record", `${records.length} request records`);
    return;
  }
  const record = records[0];
  const usage = expected.usage;
  if (usage?.prompt === undefined || usage.completion === undefined) return;
  const tokens = {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    reasoning_tokens: usage.reasoning ?? 0,
    cache_read_tokens: usage.cacheRead ?? 0,
    cache_write_tokens: usage.cacheWrite ?? 0,
  };
  const wrong = Object.entries(tokens).filter(([field, value]) => record[field] !== value).map(([field, value]) => `${field} ${record[field]}, expected ${value}`);
  results.set("record-tokens", wrong.length === 0 ? undefined : `record ${wrong.join("; ")}`);
  const charge = expectedCharge(expected)!;
  const billing = charge === 0 && usage.prompt === 0 && usage.completion === 0 ? "not_charged" : "computed";
  results.set(
    "record-charge",
    record.final_charge_micro_usd === charge && record.billing_status === billing
      ? undefined
      : `record charge ${record.final_charge_micro_usd} (${record.billing_status}), expected ${charge} (${billing})`,
  );
  // Only the chat wire has a place for the charge (usage.cost_micro_usd, streamed or not), and only in an answer.
  if (outcome.client === "openai-chat" && outcome.view.ok) {
    // An unknown charge (null) puts nothing on the wire.
    const onWire = outcome.view.usage?.cost_micro_usd;
    results.set("wire-charge", onWire === (record.final_charge_micro_usd ?? undefined) ? undefined : `usage.cost_micro_usd ${json(onWire)} on the wire, the record charged ${record.final_charge_micro_usd}`);
  }
}

function relayedServerTools({ expected, view }: CellOutcome): string | undefined {
  return view.serverTools.length > 0 ? undefined : `server tools (${[...new Set(expected.serverTools)].join(", ")}) are dropped from a relayed answer`;
}

/** Web searches carried under the client's name where it has one, every other server tool named in a warning. */
function translatedServerTools(outcome: CellOutcome): string | undefined {
  const { expected, view, client, recording } = outcome;
  const searches = expected.serverTools.filter((kind) => WEB_SEARCH_KINDS.has(kind));
  const others = expected.serverTools.filter((kind) => !WEB_SEARCH_KINDS.has(kind));
  const problems: string[] = [];
  if (searches.length > 0) {
    const carriedAs = WEB_SEARCH_AS[client];
    if (carriedAs === undefined) {
      const unnamed = warnedAs(outcome, [(warning) => warning === WEB_SEARCH_DROPPED], `${searches.length} web searches have no place in ${client}`);
      if (unnamed !== undefined) problems.push(unnamed);
    } else {
      const carried = view.serverTools.filter((kind) => kind === carriedAs).length;
      // Gemini reports its searches as one grounding, whatever their number.
      const want = client === "google-generate-content" ? 1 : searches.length;
      if (carried < want) problems.push(`${searches.length} web searches, ${carried} carried as ${carriedAs}`);
    }
  }
  if (others.length > 0) {
    const unnamed = warnedAs(outcome, namedAs(others, SERVER_TOOL_FIELDS[recording.protocol]), `server tools (${[...new Set(others)].join(", ")}) are dropped`);
    if (unnamed !== undefined) problems.push(unnamed);
  }
  return problems.length === 0 ? undefined : problems.join("; ");
}

function relayedCitations({ expected, view }: CellOutcome): string | undefined {
  const missing = expected.citations.filter((citation) => !view.citations.includes(citation));
  return missing.length === 0 ? undefined : `${missing.length} of ${expected.citations.length} citations are dropped from a relayed answer`;
}

/**
 * Web citations carried (as citations, or a search's results); a found page carried or named
 * with its search; what the client's protocol has no place for named in a warning.
 */
function translatedCitations(outcome: CellOutcome): string | undefined {
  const { expected, view, recording } = outcome;
  const seen = new Set([...view.citations, ...view.searchResults]);
  const problems: string[] = [];
  const missing = expected.citations.filter((citation) => expected.citationKinds[citation] === "web" && !seen.has(citation));
  if (missing.length > 0) problems.push(`${missing.length} cited pages are not carried (${missing.slice(0, 3).join(", ")})`);
  const uncarried = new Map<string, number>();
  for (const citation of expected.citations) {
    const kind = expected.citationKinds[citation]!;
    if (kind === "web" || seen.has(citation)) continue;
    const name = CITATION_DROPPED[kind](recording.protocol);
    uncarried.set(name, (uncarried.get(name) ?? 0) + 1);
  }
  for (const [name, count] of uncarried) {
    const unnamed = warnedAs(outcome, [(warning) => warning === name], `${count} citations are dropped`);
    if (unnamed !== undefined) problems.push(unnamed);
  }
  return problems.length === 0 ? undefined : problems.join("; ");
}

/** Every aspect that applies to the cell, with its failure or undefined. */
export function checkCell(outcome: CellOutcome): Map<Aspect, string | undefined> {
  const { recording, client, expected, view } = outcome;
  const passthrough = client === recording.protocol;
  const results = new Map<Aspect, string | undefined>();
  const record = outcome.records[0];

  if (expected.error !== undefined) {
    const problems: string[] = [];
    if (view.ok) problems.push("the client got a success");
    else {
      const head = expected.error.message.slice(0, 60);
      if (!(view.error?.message ?? "").includes(head)) problems.push(`the client's error ${json(view.error?.message)} does not carry the provider's message ${json(head)}`);
      const status = view.error?.status;
      if (status !== undefined && expected.error.statuses.length > 0 && !expected.error.statuses.includes(status)) {
        problems.push(`status ${status}, expected ${expected.error.statuses.join(" or ")}`);
      }
    }
    if (record !== undefined && record.status === "succeeded") problems.push("the record says succeeded");
    results.set("error", problems.length === 0 ? undefined : problems.join("; "));
    checkRecord(outcome, results);
    const refusedBeforeOutput = expected.usage === undefined && expected.text === "" && expected.reasoning === "" && expected.toolCalls.length === 0;
    if (refusedBeforeOutput && record !== undefined) {
      // The provider refused the call (its error came before any output, with no usage): it bills nothing.
      results.set("record-charge", (record.final_charge_micro_usd ?? 0) === 0 ? undefined : `the provider refused the call before any output and reports no usage, the record charged ${record.final_charge_micro_usd}`);
    }
    return results;
  }

  if (expected.hostedCalls.length > 0 && !passthrough) {
    // An action the client must take: refused as an error, or carried as a function call; never an empty success.
    const carried = view.ok && view.toolCalls.length > 0;
    const refused = !view.ok && record?.status !== "succeeded";
    results.set(
      "hosted-call",
      carried || refused ? undefined : `${expected.hostedCalls.join(", ")}: the client got ${view.ok ? `a success with ${view.toolCalls.length} tool calls and text ${json(view.text.slice(0, 40))}` : "an error"}, the record says ${record?.status}`,
    );
    checkRecord(outcome, results);
    return results;
  }

  results.set("answer", view.ok ? undefined : `the client got an error: ${view.error?.status ?? ""} ${view.error?.message}`);
  results.set("text", view.text === expected.text ? undefined : `text ${json(view.text.slice(0, 120))}…, expected ${json(expected.text.slice(0, 120))}… (${view.text.length} vs ${expected.text.length} characters)`);
  results.set("tool-calls", Bun.deepEquals(view.toolCalls, expected.toolCalls) ? undefined : `tool calls ${json(view.toolCalls).slice(0, 300)}, expected ${json(expected.toolCalls).slice(0, 300)}`);
  const words = FINISH_WORDS[client][expected.finish];
  results.set("finish", view.finish !== undefined && words.includes(view.finish) ? undefined : `finish ${json(view.finish)}, expected ${words.join(" or ")} (${expected.finish})`);
  if (!passthrough) results.set("usage", checkUsage(outcome));
  if (passthrough && expected.hostedCalls.length > 0) {
    results.set("hosted-call", Bun.deepEquals(view.hostedCalls, expected.hostedCalls) ? undefined : `hosted items ${json(view.hostedCalls)}, expected ${json(expected.hostedCalls)}`);
  }

  if (client === "anthropic-messages" && !passthrough && expected.reasoning !== "") {
    // Messages clients replay thinking, and Anthropic refuses it unsigned: dropped, with a warning.
    results.set("reasoning", view.reasoning !== "" ? `unsigned reasoning sent as thinking` : warned(outcome, WARNED.reasoning, "the reasoning is dropped"));
  } else {
    results.set("reasoning", squeeze(view.reasoning) === squeeze(expected.reasoning) ? undefined : `reasoning ${json(view.reasoning.slice(0, 80))}… (${view.reasoning.length} characters), expected ${json(expected.reasoning.slice(0, 80))}… (${expected.reasoning.length})`);
  }
  if (expected.redactedReasoning > 0) {
    results.set(
      "redacted-reasoning",
      client === "anthropic-messages"
        ? view.redactedReasoning === expected.redactedReasoning ? undefined : `${view.redactedReasoning} redacted_thinking blocks, expected ${expected.redactedReasoning}`
        : warned(outcome, WARNED.redacted, `${expected.redactedReasoning} redacted reasoning blocks are dropped`),
    );
  }
  if (expected.serverTools.length > 0) results.set("server-tools", passthrough ? relayedServerTools(outcome) : translatedServerTools(outcome));
  if (expected.citations.length > 0) results.set("citations", passthrough ? relayedCitations(outcome) : translatedCitations(outcome));
  checkRecord(outcome, results);
  if (record !== undefined && !results.has("record")) {
    const status = record.status === "succeeded" ? undefined : `the record says ${record.status}`;
    if (status !== undefined) results.set("record", status);
  }
  return results;
}
