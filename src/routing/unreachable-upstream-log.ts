import type { IrError } from "../ir";
import { log } from "../observability/log";
import type { UpstreamTarget } from "./upstream-request";

/** One line per origin at most this often: a provider that is down fails every request, and the log must not grow with them. */
const EVERY_MS = 10_000;
const lastLogged = new Map<string, number>();

/**
 * Logs at `warn` that an upstream could not be reached (refused, reset, unresolvable):
 * otherwise the operator only sees the clients' 503s (README "Quickstart (five minutes)", where a stale
 * catalog port is the usual cause). Names the provider and the catalog's host:port,
 * never a key, a header or a body. A customer's own BYOK `api_base` is not printed: it
 * is theirs, and the egress guard's log already speaks for it.
 */
export function logUnreachableUpstream(providerId: string, target: UpstreamTarget, error: IrError, requestId: string, now = Date.now()): void {
  let address = "customer api_base";
  if (target.customerSuppliedBase !== true) {
    const url = new URL(target.baseUrl);
    address = `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`;
  }
  const key = `${providerId} ${address}`;
  const last = lastLogged.get(key);
  if (last !== undefined && now - last < EVERY_MS) return;
  if (lastLogged.size >= 1_000) lastLogged.clear();
  lastLogged.set(key, now);
  log.warn("upstream unreachable", { requestId, provider: providerId, address, reason: error.message });
}
