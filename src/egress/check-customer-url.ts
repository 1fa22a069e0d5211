import type { AllowList } from "./allow-list";
import { stripTrailingDots } from "./allow-list";
import { nonPublicRange } from "./classify-address";
import { parseIp } from "./ip-address";

export type CustomerUrlCheck =
  /** `allowed`: an operator's private destination (BYOK_API_BASE_ALLOW), trusted as written. */
  | { ok: true; url: URL; hostname: string; port: number; allowed: boolean }
  /** `reason` completes a sentence about the URL ("api_base " + reason). */
  | { ok: false; reason: string };

/**
 * The write-time rule for a URL a customer makes the server call (docs/operations.md
 * "Customer-supplied upstream addresses (the egress guard)"): https only, no user info, query or fragment,
 * and no host that is `localhost`, `*.localhost` or a non-public IP literal, unless the
 * operator allowed it. Pure: names are not resolved here (the egress guard does that at
 * request time). The URL is read with the same WHATWG parser fetch() uses, so every IPv4
 * spelling it accepts (`127.1`, `0x7f000001`, `2130706433`, `%31%32%37.0.0.1`) arrives
 * here as the dotted quad it will connect to.
 */
export function checkCustomerUrl(raw: string, allow: AllowList): CustomerUrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "must be an absolute https URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "must be an absolute https URL" };
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "must not carry user info (user:password@)" };
  // The parser drops an empty "?" or "#"; the raw text still has it, and a "#" would cut
  // the path the gateway appends.
  if (url.search !== "" || raw.includes("?")) return { ok: false, reason: "must not carry a query" };
  if (url.hash !== "" || raw.includes("#")) return { ok: false, reason: "must not carry a fragment" };
  const hostname = stripTrailingDots(url.hostname);
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  const literal = parseIp(hostname) !== undefined;
  if (allow.allowsHost(hostname, port) || (literal && allow.allowsAddress(hostname, port))) return { ok: true, url, hostname, port, allowed: true };
  if (url.protocol !== "https:") return { ok: false, reason: "must use https://" };
  if (hostname === "") return { ok: false, reason: "must name a host" };
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return { ok: false, reason: "must not name localhost" };
  if (literal) {
    const range = nonPublicRange(hostname);
    if (range !== undefined) return { ok: false, reason: `must not name a non-public address: ${range}` };
  }
  return { ok: true, url, hostname, port, allowed: false };
}
