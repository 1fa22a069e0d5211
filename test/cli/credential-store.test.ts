import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { configDirectory, CredentialStore, type StoredCredential } from "../../src/cli/switchyard/credential-store";
import { CliError } from "../../src/cli/switchyard/cli-error";
import { freshConfigHome } from "./run-switchyard";

const credential: StoredCredential = {
  access_token: "bra_access",
  refresh_token: "brr_refresh",
  expires_at: "2030-01-01T00:00:00.000Z",
  scope: "keys:read usage:read",
  namespace_id: "ns_1",
  account_id: "acct_1",
  server: "http://127.0.0.1:8080",
};

describe("configDirectory", () => {
  test("is $XDG_CONFIG_HOME/switchyard, else ~/.config/switchyard; a relative XDG_CONFIG_HOME is ignored", () => {
    expect(configDirectory({ XDG_CONFIG_HOME: "/x/config", HOME: "/home/ada" })).toBe("/x/config/switchyard");
    expect(configDirectory({ HOME: "/home/ada" })).toBe("/home/ada/.config/switchyard");
    expect(configDirectory({ XDG_CONFIG_HOME: "relative", HOME: "/home/ada" })).toBe("/home/ada/.config/switchyard");
  });
});

describe("CredentialStore", () => {
  test("writes the file 0600 in a 0700 folder, even under a permissive umask, and leaves no temporary file", () => {
    const previous = process.umask(0o000);
    try {
      const store = new CredentialStore(join(freshConfigHome(), "switchyard"));
      store.write(credential);
      store.write({ ...credential, access_token: "bra_second" });
      expect(statSync(store.directory).mode & 0o777).toBe(0o700);
      expect(statSync(store.path).mode & 0o777).toBe(0o600);
      expect(readdirSync(store.directory)).toEqual(["credentials.json"]);
      expect(store.read()).toEqual({ ...credential, access_token: "bra_second" });
    } finally {
      process.umask(previous);
    }
  });

  test("tightens a folder that already exists with wider permissions", () => {
    const directory = join(freshConfigHome(), "switchyard");
    mkdirSync(directory, { mode: 0o755 });
    chmodSync(directory, 0o755);
    new CredentialStore(directory).write(credential);
    expect(statSync(directory).mode & 0o777).toBe(0o700);
  });

  test("a missing file reads as no credential; a damaged one is an error that says to sign in again", () => {
    const store = new CredentialStore(join(freshConfigHome(), "switchyard"));
    expect(store.read()).toBeUndefined();
    mkdirSync(store.directory, { recursive: true });
    writeFileSync(store.path, "{not json");
    expect(() => store.read()).toThrow(CliError);
    writeFileSync(store.path, JSON.stringify({ ...credential, refresh_token: 42 }));
    expect(() => store.read()).toThrow(/incomplete/);
  });

  test("withLock runs one holder at a time", async () => {
    const store = new CredentialStore(join(freshConfigHome(), "switchyard"));
    const order: string[] = [];
    const holder = (name: string) =>
      store.withLock(async () => {
        order.push(`${name} in`);
        await Bun.sleep(30);
        order.push(`${name} out`);
      });
    await Promise.all([holder("a"), holder("b")]);
    expect(order).toEqual(["a in", "a out", "b in", "b out"]);
    expect(readdirSync(store.directory)).toEqual([]);
  });
});
