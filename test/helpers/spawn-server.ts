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

/** `bun src/main.ts` as its own process, as an operator would run it; waits for /ping. On `env.PORT` when given (a replacement on its predecessor's port), else on a free port. */
export async function spawnServer(env: Record<string, string | undefined>, timeoutMs = 30_000): Promise<SpawnedServer> {
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
  void collect(child.stdout);
  void collect(child.stderr);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}): ${output}`);
    const ok = await fetch(`${url}/ping`).then((r) => r.ok, () => false);
    if (ok) return { url, process: child, exited: child.exited, output: () => output };
    await Bun.sleep(100);
  }
  child.kill();
  throw new Error(`server did not answer /ping within ${timeoutMs} ms: ${output}`);
}
