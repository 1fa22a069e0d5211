import type { IrContentPart, IrResponse, IrStreamPart } from "../ir";
import type { EffectiveGuardrail } from "../policy/effective-policy";
import type { Refusal } from "./admission-check";
import { scanPatterns, type PatternSet } from "./content-scanner";
import { redactText, StreamRedactor, type RedactedText } from "./redact-stream";

/** What the relay sends for one upstream part: these parts, in order; then, on a refusal, the protocol's error and the end. */
export interface GuardedParts {
  parts: IrStreamPart[];
  refusal?: Refusal;
}

/**
 * Response-side content patterns over an answer's stream parts: the stream observer the
 * relay calls with each part before encoding it. Text and reasoning deltas go through a
 * StreamRedactor each (`redact` and `block`); tool-call arguments are only checked
 * against `block` patterns (a replacement inside them could break the JSON the client
 * parses). Any other part first flushes what the redactors hold, so parts keep their
 * order. Built only when a guardrail has content patterns (`ResponseGuard.for`): an
 * answer without them has no observer and no holdback.
 */
export class ResponseGuard {
  private text: StreamRedactor;
  private reasoning: StreamRedactor;
  private readonly toolArguments = new Map<number, StreamRedactor>();
  private stopped = false;

  private constructor(
    private readonly all: PatternSet,
    private readonly blockOnly: PatternSet,
  ) {
    this.text = new StreamRedactor(all);
    this.reasoning = new StreamRedactor(all);
  }

  static for(guardrail: EffectiveGuardrail | null): ResponseGuard | null {
    const patterns = guardrail?.contentPatterns ?? [];
    if (patterns.length === 0) return null;
    return new ResponseGuard(scanPatterns(patterns), scanPatterns(patterns.filter((pattern) => pattern.action === "block")));
  }

  onPart(part: IrStreamPart): GuardedParts {
    if (this.stopped) return { parts: [] };
    switch (part.type) {
      case "text_delta":
        // Reasoning ends where the text begins: what it holds goes out first.
        return this.after(this.closeRun(this.reasoning, reasoningDelta), () => this.guarded(this.text.push(part.text), textDelta, []));
      case "reasoning_delta":
        return this.after(this.closeRun(this.text, textDelta), () => this.guarded(this.reasoning.push(part.text), reasoningDelta, []));
      case "tool_call_delta": {
        const redactor = this.toolArgumentsAt(part.index);
        return this.guarded(redactor.push(part.argumentsDelta), (argumentsDelta) => ({ type: "tool_call_delta", index: part.index, argumentsDelta }), []);
      }
      case "tool_call_end": {
        const held = this.toolArgumentsAt(part.index).end();
        this.toolArguments.delete(part.index);
        return this.guarded(held, (argumentsDelta) => ({ type: "tool_call_delta", index: part.index, argumentsDelta }), [part]);
      }
      case "usage":
      case "citation":
        // Some upstreams (Gemini) report usage with every chunk, and a citation comes amid
        // the text it cites: a run of text goes on across either, or a match split between
        // two chunks would be let through. A citation is the source's, not the model's text.
        return { parts: [part] };
      default: {
        // Whatever held text precedes this part goes out before it.
        const flushed = this.flush();
        if (flushed.refusal) return flushed;
        flushed.parts.push(part);
        return flushed;
      }
    }
  }

  /** Everything still held, as parts (the upstream stream ended without a finish part). */
  flush(): GuardedParts {
    if (this.stopped) return { parts: [] };
    return this.after(this.closeRun(this.reasoning, reasoningDelta), () => this.closeRun(this.text, textDelta));
  }

  /** Ends one run of text: what its redactor holds, as parts. */
  private closeRun(redactor: StreamRedactor, make: (text: string) => IrStreamPart): GuardedParts {
    return redactor.heldChars === 0 ? { parts: [] } : this.guarded(redactor.end(), make, []);
  }

  /** `first`'s parts, then (unless it refused) `then`'s. */
  private after(first: GuardedParts, then: () => GuardedParts): GuardedParts {
    if (first.refusal) return first;
    const next = then();
    return first.parts.length === 0 ? next : { parts: [...first.parts, ...next.parts], ...(next.refusal ? { refusal: next.refusal } : {}) };
  }

  private toolArgumentsAt(index: number): StreamRedactor {
    let redactor = this.toolArguments.get(index);
    if (!redactor) this.toolArguments.set(index, (redactor = new StreamRedactor(this.blockOnly)));
    return redactor;
  }

  private guarded(result: RedactedText, make: (text: string) => IrStreamPart, after: IrStreamPart[]): GuardedParts {
    const parts = result.text ? [make(result.text)] : [];
    if (result.refusal) return this.stop(parts, result.refusal);
    parts.push(...after);
    return { parts };
  }

  private stop(parts: IrStreamPart[], refusal: Refusal): GuardedParts {
    this.stopped = true;
    return { parts, refusal };
  }
}

const textDelta = (text: string): IrStreamPart => ({ type: "text_delta", text });
const reasoningDelta = (text: string): IrStreamPart => ({ type: "reasoning_delta", text });

/**
 * The same rules over a whole answer (not streamed): text and reasoning parts redacted,
 * tool-call arguments checked against `block` patterns. A refusal means the answer must
 * not be sent: the client gets the protocol's error instead.
 */
export function guardResponse(guardrail: EffectiveGuardrail | null, response: IrResponse): { response: IrResponse; refusal?: Refusal } {
  const patterns = guardrail?.contentPatterns ?? [];
  if (patterns.length === 0) return { response };
  const all = scanPatterns(patterns);
  const blockOnly = scanPatterns(patterns.filter((pattern) => pattern.action === "block"));
  const content: IrContentPart[] = [];
  for (const part of response.content) {
    if (part.type === "text" || part.type === "reasoning") {
      const result = redactText(all, part.text);
      if (result.refusal) return { response, refusal: result.refusal };
      content.push(result.text === part.text ? part : { ...part, text: result.text });
    } else if (part.type === "tool_call") {
      const result = redactText(blockOnly, part.arguments);
      if (result.refusal) return { response, refusal: result.refusal };
      content.push(part);
    } else content.push(part);
  }
  return { response: { ...response, content } };
}

