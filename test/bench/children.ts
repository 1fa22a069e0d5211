/**
 * Child processes of the bench and their cleanup. Every child and temp directory
 * registers a synchronous cleanup that runs on normal exit, on error and on
 * SIGINT/SIGTERM; the helper servers also exit by themselves when their stdin closes,
 * so even a bench killed with SIGKILL leaves only what cannot watch a pipe.
 */
import type { Subprocess } from "bun";

type Cleanup = () => void;
const cleanups: Cleanup[] = [];

/** Registers a synchronous cleanup; returns a function that runs it now (once) instead. */
export function onCleanup(cleanup: Cleanup): () => void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    try {
      cleanup();
    } catch {
      // best effort: the rest must still run
    }
  };
  cleanups.push(once);
  return once;
}

export function cleanupAll(): void {
  while (cleanups.length > 0) cleanups.pop()!();
}

process.on("exit", cleanupAll);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    cleanupAll();
    process.exit(130);
  });
}

export { freePort } from "../support/spawn-server";

export interface Child {
  name: string;
  process: Subprocess<"pipe", "pipe", "pipe">;
  /** stdout and stderr so far (last 20 KB), for error messages. */
  output(): string;
  /** Resolves with the first stdout line. */
  firstLine: Promise<string>;
  /** SIGKILL now (also done by the exit cleanup). */
  kill(): void;
}

export function spawnChild(name: string, argv: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Child {
  const child = Bun.spawn(argv, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  let resolveLine: (line: string) => void = () => {};
  let rejectLine: (error: Error) => void = () => {};
  const firstLine = new Promise<string>((resolve, reject) => {
    resolveLine = resolve;
    rejectLine = reject;
  });
  firstLine.catch(() => {}); // callers that never ask must not see an unhandled rejection
  let pending: string | undefined = ""; // stdout until its first newline
  const collect = async (stream: ReadableStream<Uint8Array>, isStdout: boolean) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      output = (output + text).slice(-(Number(process.env.CHILD_OUTPUT_KEEP) || 20_000));
      if (isStdout && pending !== undefined) {
        pending += text;
        const newline = pending.indexOf("\n");
        if (newline >= 0) {
          resolveLine(pending.slice(0, newline).trim());
          pending = undefined;
        }
      }
    }
  };
  void collect(child.stdout, true);
  void collect(child.stderr, false);
  void child.exited.then((code) => rejectLine(new Error(`${name} exited (${code}) before printing its address:\n${output}`)));
  const kill = onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { name, process: child, output: () => output, firstLine, kill };
}

/** Polls GET `${url}/ping` until it answers 200. */
export async function waitForPing(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) throw new Error(`${child.name} exited early (${child.process.exitCode}):\n${child.output()}`);
    const ok = await fetch(`${url}/ping`).then(
      async (response) => {
        await response.arrayBuffer();
        return response.status === 200;
      },
      () => false,
    );
    if (ok) return;
    await Bun.sleep(100);
  }
  throw new Error(`${child.name} did not answer ${url}/ping within ${timeoutMs} ms:\n${child.output()}`);
}

/** Resolves with the first stdout line, or rejects after `timeoutMs`. */
export async function firstLineWithin(child: Child, timeoutMs: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${child.name} printed nothing within ${timeoutMs} ms:\n${child.output()}`)), timeoutMs);
  });
  try {
    return await Promise.race([child.firstLine, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
