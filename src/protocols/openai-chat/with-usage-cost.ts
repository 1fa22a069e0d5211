import type { ChargeSplice } from "../../ir";
import { frameStartBefore } from "../sse";

/**
 * Puts the request's cost into an OpenAI chat `usage` object on its way to the
 * client: `cost` in USD (as OpenAI-compatible gateways report it) and
 * `cost_micro_usd`, the exact integer Switchyard bills. A string splice right after the
 * `{` of the answer's own `usage` object (the last one at the top level of its JSON
 * object), so a passthrough body keeps every other byte. The codec's `addCharge`
 * (index.ts); an unknown charge (null) adds nothing.
 */
export function withUsageCost(text: string, chargeMicroUsd: number | null): string {
  if (chargeMicroUsd === null) return text;
  const splice = usageCostSplice(text);
  if (splice === undefined) return text;
  return text.slice(0, splice.at) + usageCostFields(chargeMicroUsd) + splice.separator + text.slice(splice.at);
}

/**
 * Where withUsageCost writes the cost into `text`: right after the `{` of its usage object,
 * followed by a comma unless the object is empty. The codec's `chargeSplice`.
 */
export function usageCostSplice(text: string): ChargeSplice | undefined {
  const open = answerUsageObjectAt(text);
  if (open === -1) return undefined;
  const at = open + 1;
  const closesAtOnce = text.charCodeAt(skipWhitespace(text, at)) === 125; /* } */
  return { at, separator: closesAtOnce ? "" : "," };
}

/** The fields withUsageCost writes: the cost in USD and the exact integer billed. The codec's `chargeFields`. */
export function usageCostFields(chargeMicroUsd: number): string {
  return `"cost":${chargeMicroUsd / 1_000_000},"cost_micro_usd":${chargeMicroUsd}`;
}

/**
 * Where the first SSE frame holding a `usage` object begins in whole frames (-1: none):
 * a same-protocol relay holds the stream from there until the charge is known. The
 * codec's `usageFrameAt`.
 */
export function usageFrameAt(frames: string): number {
  const open = firstUsageObjectAt(frames);
  if (open === -1) return -1;
  return frameStartBefore(frames, open);
}

/*
 * A `usage` object is found by a scan that reads JSON's grammar at the key, not by
 * matching bytes: whitespace may stand around the colon (OpenAI's own non-stream bodies
 * are pretty-printed, `"usage": {`), `"usage": null` (every chunk of a stream that asked
 * for usage but the last) is passed over, and a `"usage"` inside a string value is
 * escaped (`\"usage\"`), so it never matches. It costs one `indexOf` per chunk, as the
 * literal match did; a full parse of every relayed chunk would cost far more.
 */
const USAGE_KEY = '"usage"';

/**
 * The answer's own usage object. Vendors nest more `usage` objects in theirs: Groq's
 * compound models list each model's usage in `usage_breakdown` after the answer's, and its
 * streams repeat the usage in `x_groq`. With a single `"usage"` key in the text it is that
 * one (the common case costs one `lastIndexOf` more); with several, one pass reads the
 * nesting and keeps the last usage object directly inside a top-level JSON object (a
 * body's, or a stream frame's: each `data:` line is a top-level object of its own).
 */
function answerUsageObjectAt(text: string): number {
  const last = text.lastIndexOf(USAGE_KEY);
  if (last === -1) return -1;
  if (text.indexOf(USAGE_KEY) === last) return objectAfterKey(text, last + USAGE_KEY.length);
  let found = -1;
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 34 /* " */) {
      if (depth === 1 && text.startsWith(USAGE_KEY, at)) {
        const open = objectAfterKey(text, at + USAGE_KEY.length);
        if (open !== -1) found = open;
      }
      at = stringEndAt(text, at);
    } else if (code === 123 /* { */ || code === 91 /* [ */) depth++;
    else if (code === 125 /* } */ || code === 93 /* ] */) depth--;
  }
  return found;
}

/** The index of the closing quote of the JSON string opening at `open` (escapes skipped). */
function stringEndAt(text: string, open: number): number {
  for (let at = open + 1; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 92 /* \ */) at++;
    else if (code === 34 /* " */) return at;
  }
  return text.length;
}

function firstUsageObjectAt(text: string): number {
  for (let at = text.indexOf(USAGE_KEY); at !== -1; at = text.indexOf(USAGE_KEY, at + 1)) {
    const open = objectAfterKey(text, at + USAGE_KEY.length);
    if (open !== -1) return open;
  }
  return -1;
}

/** The index of the `{` of an object value after a key ending at `from`; -1 when the key has another value (or is not a key). */
function objectAfterKey(text: string, from: number): number {
  const colon = skipWhitespace(text, from);
  if (text.charCodeAt(colon) !== 58 /* : */) return -1;
  const open = skipWhitespace(text, colon + 1);
  return text.charCodeAt(open) === 123 /* { */ ? open : -1;
}

/** JSON's insignificant whitespace: space, tab, line feed, carriage return. */
function skipWhitespace(text: string, from: number): number {
  let at = from;
  for (;;) {
    const code = text.charCodeAt(at);
    if (code !== 32 && code !== 9 && code !== 10 && code !== 13) return at;
    at++;
  }
}
