import { inPrefix, parseIp, parseIpv4, parseIpv6 } from "./ip-address";

interface Range {
  prefix: Uint8Array;
  bits: number;
  name: string;
}

function range(cidr: string, name: string): Range {
  const [address, bits] = cidr.split("/") as [string, string];
  const prefix = parseIpv4(address) ?? parseIpv6(address);
  if (!prefix) throw new Error(`bad range ${cidr}`);
  return { prefix, bits: Number(bits), name: `${name} (${cidr})` };
}

/**
 * IPv4 ranges that are not on the public internet: the IANA IPv4 Special-Purpose Address
 * Registry (RFC 6890 and its updates) entries that are not globally reachable, plus
 * multicast and the reserved 240/4 (which holds the limited broadcast address).
 */
const IPV4_NON_PUBLIC: readonly Range[] = [
  range("0.0.0.0/8", "unspecified"),
  range("10.0.0.0/8", "private"),
  range("100.64.0.0/10", "carrier-grade NAT"),
  range("127.0.0.0/8", "loopback"),
  range("169.254.0.0/16", "link-local"),
  range("172.16.0.0/12", "private"),
  range("192.0.0.0/24", "IETF protocol assignments"),
  range("192.0.2.0/24", "documentation"),
  range("192.88.99.0/24", "6to4 relay"),
  range("192.168.0.0/16", "private"),
  range("198.18.0.0/15", "benchmarking"),
  range("198.51.100.0/24", "documentation"),
  range("203.0.113.0/24", "documentation"),
  range("224.0.0.0/4", "multicast"),
  range("240.0.0.0/4", "reserved"),
];

/** IPv6 forms that carry an IPv4 address, which decides: the bytes where it sits. */
const IPV6_EMBEDDING_IPV4: readonly (Range & { at: number })[] = [
  { ...range("::ffff:0:0/96", "IPv4-mapped"), at: 12 },
  { ...range("64:ff9b::/96", "NAT64"), at: 12 },
  { ...range("2002::/16", "6to4"), at: 2 },
];

/** The IANA IPv6 Special-Purpose Address Registry entries that are not globally reachable, and everything outside 2000::/3. */
const IPV6_NON_PUBLIC: readonly Range[] = [
  range("64:ff9b:1::/48", "local-use NAT64"),
  range("100::/64", "discard-only"),
  range("2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHID)"),
  range("2001:db8::/32", "documentation"),
  range("3fff::/20", "documentation"),
  range("fc00::/7", "unique local"),
  range("fe80::/10", "link-local"),
  range("fec0::/10", "site-local"),
  range("ff00::/8", "multicast"),
  // Last: the more specific 64:ff9b:1::/48 lies inside it.
  range("::/8", "reserved (unspecified, loopback, IPv4-compatible)"),
];

const GLOBAL_UNICAST = range("2000::/3", "global unicast");

/**
 * Why an address is not a public destination, or undefined when it is. Takes a dotted
 * quad or an IPv6 address (brackets allowed); anything else is refused as "not an IP
 * address". Pure: no resolution happens here.
 */
export function nonPublicRange(address: string): string | undefined {
  const bytes = parseIp(address);
  if (!bytes) return "not an IP address";
  return bytes.length === 4 ? ipv4Range(bytes) : ipv6Range(bytes);
}

function ipv4Range(bytes: Uint8Array): string | undefined {
  return IPV4_NON_PUBLIC.find((entry) => inPrefix(bytes, entry.prefix, entry.bits))?.name;
}

function ipv6Range(bytes: Uint8Array): string | undefined {
  for (const embedding of IPV6_EMBEDDING_IPV4) {
    if (!inPrefix(bytes, embedding.prefix, embedding.bits)) continue;
    const inner = ipv4Range(bytes.subarray(embedding.at, embedding.at + 4));
    return inner === undefined ? undefined : `${embedding.name} form of ${inner}`;
  }
  const special = IPV6_NON_PUBLIC.find((entry) => inPrefix(bytes, entry.prefix, entry.bits));
  if (special) return special.name;
  return inPrefix(bytes, GLOBAL_UNICAST.prefix, GLOBAL_UNICAST.bits) ? undefined : "reserved (outside 2000::/3)";
}
