import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const REPO_ROOT = resolve(import.meta.dir, "../..");

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A fresh, empty directory for XDG_CONFIG_HOME (and HOME), so no run sees another's credential. */
export function freshConfigHome(): string {
  return mkdtempSync(join(tmpdir(), "switchyard-cli-"));
}

/**
 * `bun src/cli/switchyard.ts <args>` as a real subprocess with only the environment given
 * (plus PATH and a throwaway HOME): nothing from the test runner's own environment leaks in.
 */
export async function runSwitchyard(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  const child = Bun.spawn([process.execPath, "src/cli/switchyard.ts", ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: env.XDG_CONFIG_HOME ?? freshConfigHome(), ...env },
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, stdout, stderr };
}
