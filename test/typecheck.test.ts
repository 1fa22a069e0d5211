import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

// Bun runs TypeScript without checking its types; this keeps `main` free of type errors too.
test("the whole project type-checks (tsc --noEmit)", () => {
  const result = Bun.spawnSync([join(ROOT, "node_modules", ".bin", "tsc"), "--noEmit", "-p", ROOT], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const output = `${result.stdout.toString()}${result.stderr.toString()}`;
  expect(output).toBe("");
  expect(result.exitCode).toBe(0);
}, 60_000);
