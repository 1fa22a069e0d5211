import { irError, type IrError } from "../ir";

/** Opens a TCP connection and resolves when it is established; injectable for tests. */
export type Connector = (hostname: string, port: number) => Promise<{ close(): void }>;

const bunConnector: Connector = (hostname, port) =>
  new Promise((resolve, reject) => {
    Bun.connect({
      hostname,
      port,
      socket: {
        open(socket) {
          resolve({ close: () => socket.end() });
        },
        connectError(_socket, error) {
          reject(error);
        },
        data() {},
      },
    }).catch(reject);
  });

/**
 * The connect timeout. fetch() exposes no connection phase, so before calling an
 * origin we have not reached recently, a plain TCP connect is timed against the
 * deadline. A reachable origin is remembered for `reachableForMs`; fetch's own
 * keep-alive pool means real reconnects are rare, so this costs one handshake per
 * origin per interval, and a blackholed host fails in `connectTimeoutMs` instead
 * of the much longer first-byte deadline.
 */
export class ConnectCheck {
  private readonly reachableUntil = new Map<string, number>();

  constructor(
    private readonly connectTimeoutMs: number,
    private readonly reachableForMs = 30_000,
    private readonly connect: Connector = bunConnector,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when the origin answered a connect recently: no check needed (synchronous, for the hot path). */
  isFresh(url: string, originKey = originOf(url)): boolean {
    return (this.reachableUntil.get(originKey) ?? 0) > this.now();
  }

  /** Undefined when the origin is reachable; otherwise the retryable error to record. */
  async check(url: string, originKey = originOf(url)): Promise<IrError | undefined> {
    if (this.isFresh(url, originKey)) return undefined;
    const { hostname, port, protocol } = new URL(url);
    const numericPort = Number(port) || (protocol === "https:" ? 443 : 80);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.connectTimeoutMs);
    });
    try {
      const attempt = this.connect(hostname.replace(/^\[|\]$/g, ""), numericPort);
      const result = await Promise.race([attempt, deadline]);
      if (result === "timeout") {
        attempt.then((socket) => socket.close(), () => {});
        return irError("upstream_timeout", `could not connect to the upstream within ${this.connectTimeoutMs} ms`);
      }
      result.close();
      this.reachableUntil.set(originKey, this.now() + this.reachableForMs);
      return undefined;
    } catch {
      return irError("upstream_unavailable", "upstream connection refused");
    } finally {
      clearTimeout(timer);
    }
  }
}

/** scheme://host:port of a URL without parsing it whole (this runs per request). */
function originOf(url: string): string {
  const end = url.indexOf("/", url.indexOf("//") + 2);
  return end === -1 ? url : url.slice(0, end);
}
