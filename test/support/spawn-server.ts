import { createServer } from "node:net";
import type { Subprocess } from "bun";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface SpawnedServer {
  url: string;
  process: Subprocess<"ignore", "pipe", "pipe">;
  /** Resolves with the exit code. */
  exited: Promise<number>;
  output(): string;
}

/**
 * `bun src/main.ts` as its own process, as an operator would run it; waits for /ping. On `env.PORT` when given (a replacement on its predecessor's port), else on a free port.
 * A free port is only free when asked: something else (an outgoing connection's ephemeral
 * port) may take it before the server binds it. Then the server exits with EADDRINUSE, and
 * it is started again on another port.
 */
export async function spawnServer(env: Record<string, string | undefined>, timeoutMs = 30_000): Promise<SpawnedServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnServerOnce(env, timeoutMs);
    } catch (error) {
      if (env.PORT || attempt >= 3 || !(error instanceof PortTaken)) throw error;
    }
  }
}

class PortTaken extends Error {}

async function spawnServerOnce(env: Record<string, string | undefined>, timeoutMs: number): Promise<SpawnedServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = Bun.spawn([process.execPath, "src/main.ts"], {
    env: { ...process.env, HOST: "127.0.0.1", LOG_LEVEL: "info", ...env, PORT: String(port) },
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += new TextDecoder().decode(chunk);
  };
  const collected = Promise.all([collect(child.stdout), collect(child.stderr)]).catch(() => {});
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      await collected; // its last words, read to the end
      const message = `server exited early (${child.exitCode}): ${output}`;
      throw output.includes("EADDRINUSE") ? new PortTaken(message) : new Error(message);
    }
    const ok = await fetch(`${url}/ping`).then((r) => r.ok, () => false);
    if (ok) return { url, process: child, exited: child.exited, output: () => output };
    await Bun.sleep(100);
  }
  child.kill();
  throw new Error(`server did not answer /ping within ${timeoutMs} ms: ${output}`);
}
