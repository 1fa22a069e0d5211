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

export interface StartedLogin {
  /** The user code, read from the CLI's stdout while it polls. */
  userCode: string;
  /** Resolves once the CLI exits, with everything it printed. */
  finished: Promise<CliResult>;
}

/** `switchyard login <args>` left running until its stdout shows the user code. */
export async function startLogin(args: string[], env: Record<string, string>): Promise<StartedLogin> {
  const child = Bun.spawn([process.execPath, "src/cli/switchyard.ts", "login", ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: env.XDG_CONFIG_HOME ?? freshConfigHome(), ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(child.stderr).text();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let stdout = "";
  let userCode: string | undefined;
  while (userCode === undefined) {
    const { value, done } = await reader.read();
    if (done) break;
    stdout += decoder.decode(value, { stream: true });
    userCode = /\b([A-Z]{4}-[A-Z]{4})\b/.exec(stdout)?.[1];
  }
  const rest = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return stdout;
      stdout += decoder.decode(value, { stream: true });
    }
  })();
  const finished = Promise.all([rest, stderr, child.exited]).then(([out, err, exitCode]) => ({ exitCode, stdout: out, stderr: err }));
  if (userCode === undefined) {
    const result = await finished;
    throw new Error(`login printed no user code (exit ${result.exitCode}): ${result.stdout}${result.stderr}`);
  }
  return { userCode, finished };
}
