/**
 * CPU time of processes and threads, read from /proc: what the bench divides by the
 * requests served to get CPU µs per request by process. Linux counts it in clock ticks of
 * 1/100 s, so a slice must run for seconds to be read to a percent.
 */
import { readdirSync, readFileSync } from "node:fs";

export const TICKS_PER_SECOND = 100;

/** utime + stime of one /proc stat line (fields after the command, which may hold spaces). */
function statTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** A process's CPU ticks, all its threads; 0 once it is gone. */
export function cpuTicks(pid: number): number {
  try {
    return statTicks(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return 0;
  }
}

/** The pids of a process's children (every thread's), read from /proc. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/)) {
        if (child !== "") children.push(Number(child));
      }
    } catch {
      // the thread ended meanwhile
    }
  }
  return children;
}

/** A process and all its descendants (SERVER_PROCESSES > 1: the primary and its server processes). */
export function processTreeTicks(pid: number): number {
  let total = cpuTicks(pid);
  for (const child of childrenOf(pid)) total += processTreeTicks(child);
  return total;
}

/** Every live thread of a process: its id, kernel name and CPU ticks (threads that end meanwhile are left out). */
function liveThreads(pid: number): Array<{ id: string; name: string; ticks: number }> {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const threads: Array<{ id: string; name: string; ticks: number }> = [];
  for (const task of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, "utf8");
      threads.push({ id: task, name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ticks: statTicks(stat) });
    } catch {
      // the thread ended meanwhile
    }
  }
  return threads;
}

/**
 * CPU ticks of each thread of a process, by thread: "main" for the JavaScript thread,
 * else the kernel's thread name (Bun's "HTTP Client", JSC's "HeapHelper" GC threads, …).
 */
export function threadTicks(pid: number): Map<string, number> {
  const byThread = new Map<string, number>();
  for (const { id, name, ticks } of liveThreads(pid)) {
    const key = id === String(pid) ? "main" : name;
    byThread.set(key, (byThread.get(key) ?? 0) + ticks);
  }
  return byThread;
}

/**
 * CPU ticks of each live thread whose kernel name starts with `prefix`, by thread id. A
 * thread that exits takes its ticks with it, so sums by name can fall between two reads;
 * deltas by id (threadDelta) cannot.
 */
export function threadTicksById(pid: number, prefix: string): Map<string, number> {
  return new Map(liveThreads(pid).filter(({ name }) => name.startsWith(prefix)).map(({ id, ticks }) => [id, ticks]));
}

/** Ticks spent between two threadTicksById reads by the threads alive at the second (a lower bound: threads that exited between them are not counted). */
export function threadDelta(before: Map<string, number>, after: Map<string, number>): number {
  let ticks = 0;
  for (const [id, value] of after) ticks += value - (before.get(id) ?? 0);
  return ticks;
}

/** Idle CPU ticks of the whole machine, all cores (/proc/stat). */
export function idleTicks(): number {
  return Number(readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/)[4]);
}

/**
 * CPU ticks of PostgreSQL: every process named `postgres`, or, given the postmaster's
 * pid, only it, its children (the backends, autovacuum, …) and the children that have
 * exited — so another cluster on the machine does not count.
 */
export function postgresTicks(postmaster?: number): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (postmaster === undefined) {
        if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) === "postgres") total += statTicks(stat);
        continue;
      }
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const parent = Number(fields[1]);
      // The postmaster also carries what its exited children used (cutime + cstime): a
      // backend or autovacuum worker that ends between two reads would otherwise take its
      // ticks with it, and a sum over live processes could even fall.
      if (Number(entry) === postmaster) total += statTicks(stat) + Number(fields[13]) + Number(fields[14]);
      else if (parent === postmaster) total += statTicks(stat);
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}
