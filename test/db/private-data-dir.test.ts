import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer } from "../support/test-server";

const base = mkdtempSync(join(tmpdir(), "switchyard-private-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("DATA_DIR with DATABASE_URL", () => {
  test("generating the BYOK master key there first makes the folder 0700 and what is in it 0600", async () => {
    const dataDir = join(base, "data");
    mkdirSync(join(dataDir, "notes"), { recursive: true });
    writeFileSync(join(dataDir, "notes", "old"), "x");
    chmodSync(join(dataDir, "notes", "old"), 0o644);
    chmodSync(join(dataDir, "notes"), 0o755);
    chmodSync(dataDir, 0o755);
    const server = await startTestServer({ dataDir, byokMasterKey: undefined });
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o755); // untouched until a key is needed
      expect((await server.api("GET", "/v1/byok/encryption-pubkey")).status).toBe(200);
      const modes = Object.fromEntries(["", "notes", "notes/old", "byok-master-key"].map((path) => [path, (statSync(join(dataDir, path)).mode & 0o777).toString(8)]));
      expect(modes).toEqual({ "": "700", notes: "700", "notes/old": "600", "byok-master-key": "600" });
    } finally {
      await server.close();
    }
  });
});
