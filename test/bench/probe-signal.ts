/**
 * The bench's preloaded probes (allocation-probe.ts, retained-probe.ts) answer SIGUSR2 by
 * appending one line to a file: this sends the signal and returns that line once it is
 * whole.
 */
import { readFileSync } from "node:fs";

export async function signalProbe(pid: number, file: string, name: string, timeoutMs = 10_000): Promise<string> {
  const before = readFileSync(file, "utf8").length;
  process.kill(pid, "SIGUSR2");
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    await Bun.sleep(25);
    const text = readFileSync(file, "utf8").slice(before);
    if (text.endsWith("\n")) return text;
  }
  throw new Error(`${name}: the probe did not answer (was it preloaded?)`);
}
