/**
 * Puts the request's cost into an OpenAI chat `usage` object on its way to the
 * client: `cost` in USD (as OpenAI-compatible gateways report it) and
 * `cost_micro_usd`, the exact integer Switchyard bills. A string splice right after
 * the last `"usage":{`, so a passthrough body keeps every other byte. The codec's
 * `addCharge` (index.ts); an unknown charge (null) adds nothing.
 */
export function withUsageCost(text: string, chargeMicroUsd: number | null): string {
  if (chargeMicroUsd === null) return text;
  const at = text.lastIndexOf('"usage":{');
  if (at === -1) return text;
  const insertAt = at + '"usage":{'.length;
  const cost = `"cost":${chargeMicroUsd / 1_000_000},"cost_micro_usd":${chargeMicroUsd}`;
  const closesAtOnce = text.charCodeAt(insertAt) === 125; /* } */
  return text.slice(0, insertAt) + cost + (closesAtOnce ? "" : ",") + text.slice(insertAt);
}
