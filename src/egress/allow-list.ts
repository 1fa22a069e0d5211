import { inPrefix, parseIp } from "./ip-address";

/**
 * The operator's private destinations for customer-supplied upstream addresses
 * (BYOK_API_BASE_ALLOW): `host` (any port), `host:port`, or a CIDR (`10.1.0.0/16`,
 * `fd00::/8`). Hosts are compared as the URL parser writes them (lower case, IPv6 in
 * brackets, no trailing dot); a CIDR also covers the addresses a name resolves to.
 */
export interface AllowList {
  /** The host (as `URL.hostname` writes it) and port (a number) are named by an entry. */
  allowsHost(hostname: string, port: number): boolean;
  /** The address (dotted quad or IPv6, brackets allowed) lies in an allowed CIDR, or is an IP host entry (with this port, if it names one). */
  allowsAddress(address: string, port: number): boolean;
}

interface HostEntry {
  host: string;
  port: number | undefined;
}

const HOST_PORT = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/;

/** Parses the entries; a malformed one throws, naming it (the process does not start). */
export function parseAllowList(entries: readonly string[]): AllowList {
  const hosts: HostEntry[] = [];
  const cidrs: { prefix: Uint8Array; bits: number }[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === "") continue;
    const slash = entry.indexOf("/");
    if (slash !== -1) {
      const prefix = parseIp(entry.slice(0, slash));
      const bits = Number(entry.slice(slash + 1));
      if (!prefix || !/^\d{1,3}$/.test(entry.slice(slash + 1)) || bits > prefix.length * 8) throw new Error(`BYOK_API_BASE_ALLOW: "${entry}" is not a CIDR`);
      cidrs.push({ prefix, bits });
      continue;
    }
    // A bare IPv6 address has colons of its own: it is a host without a port.
    const bareIpv6 = !entry.startsWith("[") && entry.split(":").length > 2;
    const match = bareIpv6 ? [entry, `[${entry}]`, undefined] : HOST_PORT.exec(entry);
    const host = match ? normalizedHost(match[1]!) : undefined;
    const port = match?.[2] === undefined ? undefined : Number(match[2]);
    if (host === undefined || (port !== undefined && (port < 1 || port > 65535))) throw new Error(`BYOK_API_BASE_ALLOW: "${entry}" is not a host, host:port or CIDR`);
    hosts.push({ host, port });
  }
  return {
    allowsHost: (hostname, port) => {
      const host = stripTrailingDots(hostname);
      return hosts.some((entry) => entry.host === host && (entry.port === undefined || entry.port === port));
    },
    allowsAddress: (address, port) => {
      const bytes = parseIp(address);
      if (!bytes) return false;
      if (cidrs.some((cidr) => inPrefix(bytes, cidr.prefix, cidr.bits))) return true;
      return hosts.some((entry) => (entry.port === undefined || entry.port === port) && sameAddress(parseIp(entry.host), bytes));
    },
  };
}

/** The host as the URL parser writes it (so `0x7f000001` names 127.0.0.1), or undefined. */
function normalizedHost(host: string): string | undefined {
  try {
    const url = new URL(`http://${host}/`);
    return url.hostname === "" ? undefined : stripTrailingDots(url.hostname);
  } catch {
    return undefined;
  }
}

export function stripTrailingDots(hostname: string): string {
  return hostname.replace(/\.+$/, "");
}

function sameAddress(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && a.every((byte, i) => byte === b[i]);
}
