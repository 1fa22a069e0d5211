import { describe, expect, test } from "bun:test";
import { checkCustomerUrl } from "../../src/egress/check-customer-url";
import { parseAllowList } from "../../src/egress/allow-list";
import { nonPublicRange } from "../../src/egress/classify-address";
import { loadConfig } from "../../src/config";

const none = parseAllowList([]);
const reasonFor = (raw: string, allow = none) => {
  const check = checkCustomerUrl(raw, allow);
  return check.ok ? undefined : check.reason;
};

describe("checkCustomerUrl refuses what a customer must not make the gateway call", () => {
  const refused: [string, RegExp][] = [
    // Every IPv4 spelling the URL parser accepts for 127.0.0.1.
    ["https://127.0.0.1/v1", /loopback/],
    ["https://127.1/v1", /loopback/],
    ["https://0177.0.0.1/v1", /loopback/],
    ["https://0x7f.1/v1", /loopback/],
    ["https://2130706433/v1", /loopback/],
    ["https://0x7f000001/v1", /loopback/],
    ["https://%31%32%37.0.0.1/v1", /loopback/],
    ["https://127.0.0.1./v1", /loopback/],
    ["https://127.255.255.254:8443/v1", /loopback/],
    // IPv6, mapped, NAT64 and 6to4 forms.
    ["https://[::1]/v1", /reserved/],
    ["https://[::]/v1", /reserved/],
    ["https://[::ffff:127.0.0.1]/v1", /IPv4-mapped.* form of loopback/],
    ["https://[::ffff:7f00:1]/v1", /IPv4-mapped.* form of loopback/],
    ["https://[::ffff:a9fe:a9fe]/v1", /IPv4-mapped.* form of link-local/],
    ["https://[64:ff9b::7f00:1]/v1", /^.*[^-]NAT64.* form of loopback/],
    ["https://[64:ff9b::169.254.169.254]/v1", /^.*[^-]NAT64.* form of link-local/],
    ["https://[64:ff9b:1::a00:1]/v1", /local-use NAT64/],
    ["https://[2002:7f00:1::]/v1", /6to4.* form of loopback/],
    ["https://[::127.0.0.1]/v1", /reserved/],
    ["https://[fe80::1]/v1", /link-local/],
    ["https://[fc00::1]/v1", /unique local/],
    ["https://[fd12:3456::1]/v1", /unique local/],
    ["https://[fec0::1]/v1", /site-local/],
    ["https://[ff02::1]/v1", /multicast/],
    ["https://[2001:db8::1]/v1", /documentation/],
    ["https://[2001::1]/v1", /Teredo/],
    ["https://[100::1]/v1", /discard/],
    // IPv4 ranges.
    ["https://10.0.0.1/v1", /private/],
    ["https://10.255.255.255/v1", /private/],
    ["https://172.16.0.1/v1", /private/],
    ["https://172.31.255.255/v1", /private/],
    ["https://192.168.1.1/v1", /private/],
    ["https://100.64.0.1/v1", /carrier-grade NAT/],
    ["https://100.127.255.255/v1", /carrier-grade NAT/],
    ["https://169.254.169.254/latest/meta-data", /link-local/],
    ["https://0.0.0.0/v1", /unspecified/],
    ["https://0/v1", /unspecified/],
    ["https://0.1.2.3/v1", /unspecified/],
    ["https://224.0.0.1/v1", /multicast/],
    ["https://239.255.255.255/v1", /multicast/],
    ["https://240.0.0.1/v1", /reserved/],
    ["https://255.255.255.255/v1", /reserved/],
    ["https://192.0.2.1/v1", /documentation/],
    ["https://198.18.0.1/v1", /benchmarking/],
    // Names.
    ["https://localhost/v1", /localhost/],
    ["https://LOCALHOST./v1", /localhost/],
    ["https://localhost../v1", /localhost/],
    ["https://foo.localhost/v1", /localhost/],
    ["https://a.b.Localhost./v1", /localhost/],
    // Shape.
    ["https://user@api.example.com/v1", /user info/],
    ["https://user:pass@api.example.com/v1", /user info/],
    ["https://:pass@api.example.com/v1", /user info/],
    ["https://api.example.com/v1?x=1", /query/],
    ["https://api.example.com/v1?", /query/],
    ["https://api.example.com/v1#", /fragment/],
    ["https://api.example.com/v1#frag", /fragment/],
    ["https://127.0.0.1:9/latest/meta-data/#", /fragment|loopback/],
    ["http://api.example.com/v1", /https/],
    ["http://127.0.0.1:8080/v1", /https/],
    ["ftp://api.example.com/v1", /absolute https URL/],
    ["file:///etc/passwd", /absolute https URL/],
    ["javascript:alert(1)", /absolute https URL/],
    ["/relative/path", /absolute https URL/],
    ["not a url", /absolute https URL/],
  ];
  for (const [raw, reason] of refused) {
    test(`${raw} is refused (${reason.source})`, () => {
      expect(reasonFor(raw)).toMatch(reason);
    });
  }
});

describe("checkCustomerUrl accepts public https destinations", () => {
  const accepted = [
    "https://api.openai.com/v1",
    "https://proxy.example.test/v1",
    "https://API.Example.COM./v1/",
    "https://8.8.8.8/v1",
    "https://1.1.1.1:8443/v1",
    "https://[2606:4700:4700::1111]/v1",
    "https://[::ffff:8.8.8.8]/v1",
    "https://[64:ff9b::808:808]/v1",
    "https://172.32.0.1/v1",
    "https://100.128.0.1/v1",
    "https://localhost.example.com/v1",
    "https://mylocalhost/v1",
  ];
  for (const raw of accepted) {
    test(`${raw} is accepted`, () => {
      expect(reasonFor(raw)).toBeUndefined();
    });
  }
});

describe("BYOK_API_BASE_ALLOW", () => {
  test("a host entry allows that host on any port, http included; other hosts stay refused", () => {
    const allow = parseAllowList(["127.0.0.1"]);
    expect(reasonFor("http://127.0.0.1:8080/v1", allow)).toBeUndefined();
    expect(reasonFor("https://127.1:9/v1", allow)).toBeUndefined();
    expect(reasonFor("http://127.0.0.2/v1", allow)).toMatch(/https/);
    expect(reasonFor("https://[::1]/v1", allow)).toMatch(/reserved/);
  });

  test("a host:port entry allows only that port; user info, query and fragment stay refused", () => {
    const allow = parseAllowList(["llm.internal:8443", "[::1]:9000"]);
    expect(reasonFor("http://llm.internal:8443/v1", allow)).toBeUndefined();
    expect(reasonFor("http://LLM.internal.:8443/v1", allow)).toBeUndefined();
    expect(reasonFor("http://llm.internal:8444/v1", allow)).toMatch(/https/);
    expect(reasonFor("http://[::1]:9000/v1", allow)).toBeUndefined();
    expect(reasonFor("http://[::1]:9001/v1", allow)).toMatch(/https/);
    expect(reasonFor("http://a@llm.internal:8443/v1", allow)).toMatch(/user info/);
    expect(reasonFor("http://llm.internal:8443/v1#", allow)).toMatch(/fragment/);
  });

  test("a CIDR entry allows literal addresses inside it", () => {
    const allow = parseAllowList(["10.20.0.0/16", "fd00::/8"]);
    expect(reasonFor("http://10.20.3.4:80/v1", allow)).toBeUndefined();
    expect(reasonFor("https://10.21.3.4/v1", allow)).toMatch(/private/);
    expect(reasonFor("https://[fd00::5]/v1", allow)).toBeUndefined();
    expect(reasonFor("https://[fc00::5]/v1", allow)).toMatch(/unique local/);
  });

  test("entries are written the way the URL parser reads hosts", () => {
    expect(reasonFor("http://127.0.0.1/v1", parseAllowList(["0x7f000001"]))).toBeUndefined();
    expect(reasonFor("http://[::1]/v1", parseAllowList(["::1"]))).toBeUndefined();
    expect(reasonFor("http://localhost:3000/v1", parseAllowList([" localhost:3000 ", ""]))).toBeUndefined();
  });

  test("the variable is a comma-separated list; unset is empty", () => {
    expect(loadConfig({ BYOK_API_BASE_ALLOW: " llm.internal , 10.0.0.1:8080,,10.1.0.0/16 " }).byokApiBaseAllow).toEqual(["llm.internal", "10.0.0.1:8080", "10.1.0.0/16"]);
    expect(loadConfig({}).byokApiBaseAllow).toEqual([]);
  });

  test("a malformed entry is refused at startup, naming it", () => {
    for (const entry of ["10.0.0.0/33", "10.0.0.0/x", "nothost/8", "host:99999", "a b", "[::1"]) {
      expect(() => parseAllowList([entry])).toThrow(entry);
    }
  });
});

describe("nonPublicRange (addresses as a resolver answers them)", () => {
  test("classifies resolver answers, and refuses anything that is not an address", () => {
    expect(nonPublicRange("127.0.0.1")).toMatch(/loopback/);
    expect(nonPublicRange("::1")).toMatch(/reserved/);
    expect(nonPublicRange("::ffff:10.0.0.1")).toMatch(/private/);
    expect(nonPublicRange("fe80::1%eth0")).toMatch(/link-local/);
    expect(nonPublicRange("93.184.216.34")).toBeUndefined();
    expect(nonPublicRange("2606:2800:220:1:248:1893:25c8:1946")).toBeUndefined();
    for (const junk of ["", "localhost", "127.1", "0127.0.0.1", "256.0.0.1", "1::2::3", "1:2:3:4:5:6:7:8:9", "12345::"]) {
      expect(nonPublicRange(junk)).toBe("not an IP address");
    }
  });
});
