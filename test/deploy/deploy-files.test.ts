import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkHaproxyConfig } from "../support/haproxy";

/**
 * deploy/compose.yaml and deploy/haproxy.cfg cannot rot: the compose file parses and wires
 * PostgreSQL (built from Debian's packages), the one-shot migration, two instances and
 * HAProxy as docs/operations.md "Deployment" says, and the stand-in overlay
 * test/deploy/compose.test.ts lays over it points both instances at its stand-in; every server HAProxy balances is an instance of the compose file,
 * checked on /ready; every variable given to an instance is one docs/configuration.md
 * documents; and `haproxy -c` accepts the configuration.
 */
const ROOT = resolve(import.meta.dir, "../..");
const DEPLOY = join(ROOT, "deploy");

interface ComposeService {
  image?: string;
  entrypoint?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  stop_grace_period?: string;
  ports?: string[];
  build?: { context: string; dockerfile: string };
  healthcheck?: { test: string[] };
}

const compose = Bun.YAML.parse(readFileSync(join(DEPLOY, "compose.yaml"), "utf8")) as { services: Record<string, ComposeService> };
const haproxyConfig = readFileSync(join(DEPLOY, "haproxy.cfg"), "utf8");
const services = compose.services;
const instances = ["switchyard-1", "switchyard-2"];

/** `30s`, `1m30s`, `500ms` in milliseconds. */
function durationMs(text: string): number {
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) total += Number(amount) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[unit as "ms"];
  return total;
}

describe("deploy/compose.yaml", () => {
  test("PostgreSQL with a health check, a one-shot migration after it, two instances after that, HAProxy in front", () => {
    expect(Object.keys(services).sort()).toEqual(["haproxy", "migrate", "postgres", "switchyard-1", "switchyard-2"]);
    expect(services.postgres!.healthcheck!.test).toContain("pg_isready");
    // Built from Debian's packages like HAProxy's image, not pulled from a registry.
    expect(services.postgres!.build!.dockerfile).toBe("postgres.Containerfile");
    expect(services.postgres!.image).toBe("localhost/switchyard-postgres:15");
    expect(services.migrate!.image).toBe("localhost/switchyard:latest");
    expect(services.migrate!.entrypoint).toEqual(["bun", "src/main.ts", "migrate"]);
    expect(services.migrate!.depends_on).toEqual({ postgres: { condition: "service_healthy" } });
    for (const name of instances) {
      const instance = services[name]!;
      expect(instance.image).toBe("localhost/switchyard:latest");
      expect(instance.depends_on).toEqual({ migrate: { condition: "service_completed_successfully" } });
      expect(instance.environment!.DATABASE_URL).toBe(services.migrate!.environment!.DATABASE_URL);
    }
    expect(services.haproxy!.build!.dockerfile).toBe("haproxy.Containerfile");
    expect(services.haproxy!.ports).toEqual(["${SWITCHYARD_PORT:-8080}:8080"]);
  });

  test("an instance is stopped with SIGKILL only after its drain delay and grace period have passed", () => {
    for (const name of instances) {
      const instance = services[name]!;
      const drain = Number(instance.environment!.SHUTDOWN_DELAY_MS) + Number(instance.environment!.SHUTDOWN_GRACE_MS);
      expect(drain).toBeGreaterThan(0);
      expect(durationMs(instance.stop_grace_period!)).toBeGreaterThan(drain);
    }
  });

  test("every variable given to an instance is documented in docs/configuration.md", () => {
    const configuration = readFileSync(join(ROOT, "docs", "configuration.md"), "utf8");
    for (const name of instances) {
      for (const variable of Object.keys(services[name]!.environment!)) expect({ variable, documented: configuration.includes(`\`${variable}\``) }).toEqual({ variable, documented: true });
    }
  });
});

describe("the stand-in overlay (test/deploy/compose-stand-in/)", () => {
  const STAND_IN = join(ROOT, "test", "deploy", "compose-stand-in");
  const overlay = Bun.YAML.parse(readFileSync(join(STAND_IN, "compose.yaml"), "utf8")) as { services: Record<string, ComposeService & { volumes?: string[] }> };

  test("both instances read a catalog naming the stand-in service at the port stand-in.ts listens on", async () => {
    const catalog = (await Bun.file(join(STAND_IN, "providers.json")).json()) as { providers: { base_url: string }[] };
    const port = /const PORT = (\d+);/.exec(readFileSync(join(STAND_IN, "stand-in.ts"), "utf8"))![1];
    expect(catalog.providers.map((provider) => provider.base_url)).toEqual([`http://stand-in:${port}/v1`]);
    expect(Object.keys(overlay.services).sort()).toEqual(["stand-in", ...instances].sort());
    for (const name of instances) {
      const instance = overlay.services[name]!;
      const mount = instance.volumes!.map((volume) => volume.split(":"));
      // Relative to deploy/, the first compose file's folder.
      expect(mount).toEqual([["../test/deploy/compose-stand-in/providers.json", instance.environment!.PROVIDERS_FILE!, "ro"]]);
    }
  });
});

describe("deploy/haproxy.cfg", () => {
  test("balances exactly the compose file's instances, on their PORT, checked on GET /ready; X-Forwarded-For for TRUSTED_PROXY_HOPS=1", () => {
    const servers = [...haproxyConfig.matchAll(/^\s*server\s+(\S+)\s+([^:\s]+):(\d+)\s+(.*)$/gm)].map(([, name, host, port, rest]) => ({ name, host, port, checked: /\bcheck\b/.test(rest!) }));
    expect(servers).toEqual(instances.map((name) => ({ name, host: name, port: services[name]!.environment!.PORT!, checked: true })));
    expect(haproxyConfig).toMatch(/^\s*option httpchk GET \/ready$/m);
    expect(haproxyConfig).toMatch(/^\s*http-check expect status 200$/m);
    expect(haproxyConfig).toMatch(/^\s*option forwardfor$/m);
    for (const name of instances) expect(services[name]!.environment!.TRUSTED_PROXY_HOPS).toBe("1");
    // The front end listens where the compose file publishes it.
    expect(haproxyConfig).toMatch(/^\s*bind :8080$/m);
  });

  test("haproxy -c accepts it (outside the compose network only the instances' names do not resolve)", async () => {
    const verdict = await checkHaproxyConfig(join(DEPLOY, "haproxy.cfg"));
    expect(verdict.output).toContain("Configuration file is valid");
    expect(verdict.valid).toBe(true);
    const warnings = verdict.output.split("\n").filter((line) => line.includes("[WARNING]"));
    for (const warning of warnings) expect(warning).toMatch(/could not resolve address 'switchyard-\d'/);
  });
});
