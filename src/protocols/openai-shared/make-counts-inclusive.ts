import type { IrUsage } from "../../ir";

/**
 * Both OpenAI wires report reasoning next to the output count and cached tokens next to
 * the input count, and vendors disagree on whether those counts already include them:
 * OpenAI, Azure, DeepSeek, Groq and Mistral count reasoning inside `completion_tokens`
 * and (where they report them) cache reads inside `prompt_tokens`; xAI's chat completions count reasoning OUTSIDE
 * (a recorded grok-3-mini answer: prompt 12, completion 1, reasoning 228, total 241), and
 * have been seen counting cache reads outside too (vercel/ai#12485: prompt 4142, cached
 * 4328, completion 254, total 8724). The table of every vendor is in src/protocols/README.md.
 *
 * The vendor's own `total` says which: whichever placement makes the parts add up to it
 * is the one the vendor used (reasoning outside is tried first: the one vendor seen doing
 * it). Without a total that decides, a count larger than the one it would sit inside can
 * only be outside. Otherwise the OpenAI convention (inside) stands. Takes the counts as
 * reported and returns them with prompt and completion made inclusive (the IR convention).
 */
export function makeCountsInclusive(usage: IrUsage, total: unknown): IrUsage {
  const { promptTokens: prompt, completionTokens: completion } = usage;
  if (prompt === undefined || completion === undefined) return usage;
  const reasoning = usage.reasoningTokens ?? 0;
  const cached = usage.cacheReadTokens ?? 0;
  if (reasoning === 0 && cached === 0) return usage;

  let reasoningOutside = reasoning > completion;
  let cachedOutside = cached > prompt;
  if (typeof total === "number" && total !== prompt + completion) {
    // [reasoning outside, cached outside]
    const placements: Array<[boolean, boolean]> = [
      [true, false],
      [false, true],
      [true, true],
    ];
    const match = placements.find(
      ([reasoningOut, cachedOut]) => prompt + completion + (reasoningOut ? reasoning : 0) + (cachedOut ? cached : 0) === total,
    );
    if (match !== undefined) [reasoningOutside, cachedOutside] = match;
  }
  if (!reasoningOutside && !cachedOutside) return usage;
  return {
    ...usage,
    promptTokens: cachedOutside ? prompt + cached : prompt,
    completionTokens: reasoningOutside ? completion + reasoning : completion,
  };
}
