import { lookup } from "node:dns/promises";
import type { AllowList } from "./allow-list";
import { checkCustomerUrl } from "./check-customer-url";
import { nonPublicRange } from "./classify-address";
import { parseIp } from "./ip-address";

/** Every address a name resolves to (A and AAAA); injectable so tests control the answers. */
export type HostResolver = (hostname: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

export type Destination =
  /**
   * Where to connect: `baseUrl` with the host replaced by the checked address. `host`
   * and `serverName` (when the host was a name) carry the name for the Host header and
   * TLS SNI and certificate check.
   */
  | { ok: true; baseUrl: string; host?: string; serverName?: string }
  | { ok: false; reason: string };

/**
 * The one gate for outbound calls a customer can steer (a BYOK `api_base`). At write time
 * it applies the URL rule (check-customer-url.ts); at request time it applies it again,
 * resolves the name, refuses if any address is non-public (unless allowed), and pins the
 * connection to the address it checked, so a second, different DNS answer (rebinding)
 * never reaches the socket. Platform URLs from PROVIDERS_FILE never come here.
 */
export class EgressGuard {
  constructor(
    private readonly allow: AllowList,
    private readonly resolveHost: HostResolver = systemResolver,
    private readonly resolveTimeoutMs = 5_000,
  ) {}

  /** Why the URL may not be stored, or undefined when it may. */
  refusal(raw: string): string | undefined {
    const check = checkCustomerUrl(raw, this.allow);
    return check.ok ? undefined : check.reason;
  }

  async destination(baseUrl: string): Promise<Destination> {
    const check = checkCustomerUrl(baseUrl, this.allow);
    if (!check.ok) return check;
    const { url, hostname, port } = check;
    // An operator's named private destination, or an IP literal that passed the rule: nothing to resolve.
    if (check.allowed || parseIp(hostname) !== undefined) return { ok: true, baseUrl };
    let addresses: string[];
    try {
      addresses = await this.resolve(hostname);
    } catch {
      return { ok: false, reason: "does not resolve" };
    }
    if (addresses.length === 0) return { ok: false, reason: "does not resolve" };
    for (const address of addresses) {
      const range = nonPublicRange(address);
      if (range !== undefined && !this.allow.allowsAddress(address, port)) return { ok: false, reason: `resolves to a non-public address: ${range}` };
    }
    const address = addresses[0]!;
    const host = url.host;
    url.hostname = address.includes(":") ? `[${address}]` : address;
    return { ok: true, baseUrl: url.href, host, serverName: hostname };
  }

  private resolve(hostname: string): Promise<string[]> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("resolution timed out")), this.resolveTimeoutMs);
    });
    return Promise.race([this.resolveHost(hostname), deadline]).finally(() => clearTimeout(timer));
  }
}
