import type { Subprocess } from "bun";
import { log } from "./observability/log";

/**
 * SERVER_PROCESSES=N (docs/operations.md "Server processes"): the process an operator
 * starts (the primary) serves nothing itself; it runs N copies of itself (`bun src/main.ts`)
 * that listen on one port (`reusePort`: the kernel spreads connections over them), each
 * with its own database pool, worker threads and /metrics, sharing only the database.
 *
 * - SIGTERM or SIGINT to the primary reaches every server process as SIGTERM (a second
 *   one as a second SIGTERM: "now"); the primary exits once they all have, 0 when they
 *   all exited 0.
 * - A server process that dies after it served is logged and started again (after a
 *   second), so one crash costs one process's connections, not the service.
 * - A server process that dies before it listens (the database is unreachable, a bad
 *   catalog) stops the others, and the primary exits 1: starting again would fail again.
 */

/** Set in the environment of every server process the primary starts: its number, 1..N. */
export const SERVER_PROCESS_ENV = "SWITCHYARD_SERVER_PROCESS";

/** This process's number among the server processes ("1".."N"); undefined when it is the only one. */
export function serverProcessNumber(): string | undefined {
  return process.env[SERVER_PROCESS_ENV] || undefined;
}

/** Tells the primary, if any, that this server process is listening. */
export function reportListening(): void {
  if (serverProcessNumber() !== undefined) process.send?.("listening");
}

const RESTART_DELAY_MS = 1_000;

interface Slot {
  number: number;
  child: Subprocess<"ignore", "inherit", "inherit">;
  listening: boolean;
}

/** Runs `count` server processes until a signal stops them; resolves with the primary's exit code. */
export function superviseServerProcesses(count: number): Promise<number> {
  const slots: Slot[] = [];
  let stopping = false;
  let failed = false;
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));

  const allExited = async () => {
    const codes = await Promise.all(slots.map((slot) => slot.child.exited));
    finish(failed || codes.some((code) => code !== 0) ? 1 : 0);
  };
  const stopAll = () => {
    for (const slot of slots) if (slot.child.exitCode === null && slot.child.signalCode === null) slot.child.kill("SIGTERM");
  };

  const start = (number: number): Slot => {
    const slot: Slot = {
      number,
      listening: false,
      child: Bun.spawn([process.execPath, ...process.argv.slice(1)], {
        env: { ...process.env, [SERVER_PROCESS_ENV]: String(number) },
        stdio: ["ignore", "inherit", "inherit"],
        serialization: "json",
        ipc: (message) => {
          if (message === "listening") slot.listening = true;
        },
      }),
    };
    void slot.child.exited.then((code) => {
      if (stopping) return;
      const details = { process: number, pid: slot.child.pid, code, signal: slot.child.signalCode ?? undefined };
      if (!slot.listening) {
        log.error("server process exited before it listened; stopping", details);
        stopping = true;
        failed = true;
        stopAll();
        void allExited();
        return;
      }
      log.error("server process exited unexpectedly; starting it again", details);
      setTimeout(() => {
        if (!stopping) slots[number - 1] = start(number);
      }, RESTART_DELAY_MS);
    });
    return slot;
  };

  for (let number = 1; number <= count; number++) slots.push(start(number));
  log.info("server processes started", { processes: count, pids: slots.map((slot) => slot.child.pid) });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      log.info(stopping ? "stopping server processes now" : "stopping server processes", { signal });
      const first = !stopping;
      stopping = true;
      // Every live process gets SIGTERM: a second one tells it to stop at once.
      stopAll();
      if (first) void allExited();
    });
  }
  return done;
}
