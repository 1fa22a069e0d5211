import { irError, type IrError } from "../ir";
import { upstreamHeaders, upstreamUrl, type UpstreamTarget } from "./upstream-request";
import type { ConnectCheck } from "./connect-check";

export interface UpstreamTimeouts {
  /** Establishing the TCP connection (see connect-check.ts). */
  connectMs: number;
  /** Until the upstream's response head arrives (connection, request, first byte). */
  firstByteMs: number;
  /** Between body chunks. */
  idleMs: number;
}

/** A connection pinned to an address the egress guard checked: the name it stands for goes in the Host header and TLS SNI. */
export interface PinnedHost {
  host: string;
  serverName: string;
}

export type UpstreamCall =
  | { ok: true; response: Response; controller: AbortController; release: () => void }
  | { ok: false; error: IrError; retryable: true };

export interface UpstreamCallOptions {
  target: UpstreamTarget;
  /** The request body, already translated for the upstream. */
  /** A Blob when a worker wrote a large body that is not ASCII (src/translation/worker-message.ts). */
  body: string | Blob;
  stream: boolean;
  /** The client's request headers (upstream-request.ts picks the ones passed on). */
  clientHeaders: Headers;
  requestId: string;
  timeouts: UpstreamTimeouts;
  /** Aborts when the client hangs up. */
  clientSignal: AbortSignal;
  connectCheck?: ConnectCheck | undefined;
  /** Aborts when the shutdown grace period runs out. */
  graceOver?: AbortSignal | undefined;
  pinned?: PinnedHost | undefined;
}

/**
 * The calls under way that a shared signal (the shutdown grace period) aborts: one listener
 * for all of them, instead of a listener added and removed for each call (2.4 % of the
 * request thread in a profile of the metered path, 2026-11-29; a Set's add and delete cost
 * a fraction of that).
 */
const callsBySignal = new WeakMap<AbortSignal, Set<AbortController>>();

function callsUnder(signal: AbortSignal): Set<AbortController> {
  let calls = callsBySignal.get(signal);
  if (calls === undefined) {
    const under = new Set<AbortController>();
    calls = under;
    callsBySignal.set(signal, under);
    signal.addEventListener(
      "abort",
      () => {
        for (const controller of under) controller.abort();
        under.clear();
      },
      { once: true },
    );
  }
  return calls;
}

/**
 * Sends one attempt. Resolves when the response head arrives; a network failure or
 * the first-byte deadline becomes a retryable IrError. `clientSignal` (the client
 * hanging up) aborts the upstream request too, and so does `graceOver` (the shutdown grace
 * period ran out), streamed or not.
 */
export async function callUpstream(options: UpstreamCallOptions): Promise<UpstreamCall> {
  const { target, body, stream, clientHeaders, requestId, timeouts, clientSignal, connectCheck, graceOver, pinned } = options;
  const url = upstreamUrl(target, stream);
  if (connectCheck !== undefined && !connectCheck.isFresh(url)) {
    const unreachable = await connectCheck.check(url);
    if (unreachable) return { ok: false, error: unreachable, retryable: true };
  }
  const controller = new AbortController();
  // Only streams follow the client: a non-streaming request runs to completion and is
  // settled even if the client hangs up, and skipping the listener
  // saves work on the hottest path.
  const onClientAbort = stream ? () => controller.abort() : undefined;
  if (onClientAbort) clientSignal.addEventListener("abort", onClientAbort, { once: true });
  const calls = graceOver ? callsUnder(graceOver) : undefined;
  calls?.add(controller);
  const removeListeners = () => {
    if (onClientAbort) clientSignal.removeEventListener("abort", onClientAbort);
    calls?.delete(controller);
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeouts.firstByteMs);
  try {
    const headers = upstreamHeaders(target, clientHeaders, requestId);
    if (pinned) headers.host = pinned.host;
    const response = await fetch(url, {
      method: "POST",
      headers,
      // The certificate is checked against the name, not the pinned address.
      ...(pinned && url.startsWith("https:") ? { tls: { serverName: pinned.serverName } } : {}),
      body,
      signal: controller.signal,
      // Upstream redirects are not followed: a provider never redirects an API call.
      redirect: "manual",
    });
    return { ok: true, response, controller, release: removeListeners };
  } catch {
    removeListeners();
    if (timedOut) return { ok: false, error: irError("upstream_timeout", `upstream did not answer within ${timeouts.firstByteMs} ms`), retryable: true };
    return { ok: false, error: irError("upstream_unavailable", "upstream connection failed"), retryable: true };
  } finally {
    clearTimeout(timer);
  }
}
