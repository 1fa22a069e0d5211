import { afterEach, describe, expect, test } from "bun:test";
import {
  WorkerPool,
  defaultWorkerPoolSize,
  WorkerCrashedError,
  WorkerHandlerError,
  WorkerPoolClosedError,
} from "../../src/workers";

const ECHO = new URL("./fixtures/echo.worker.ts", import.meta.url);
const SLOW_START = new URL("./fixtures/slow-start.worker.ts", import.meta.url);
const BROKEN = new URL("./fixtures/broken.worker.ts", import.meta.url);
const LIFETIME_SCRIPT = new URL("./fixtures/pool-lifetime-script.ts", import.meta.url);

/** Crash tests must fail fast, not hang until the suite's 30 s default. */
const NO_HANG_MS = 4_000;

const pools: WorkerPool[] = [];
function openPool(size: number, workerUrl: URL = ECHO): WorkerPool {
  const pool = new WorkerPool({ workerUrl, size, name: "test" });
  pools.push(pool);
  return pool;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

/** The rejection of `promise`; fails the test if it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    const value = await promise;
    throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
  } catch (error) {
    if (!(error instanceof Error)) throw new Error(`rejected with a non-Error: ${String(error)}`);
    return error;
  }
}

/** Resolves when `condition` holds, polling; for states reached through worker events. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + NO_HANG_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

describe("WorkerPool calls", () => {
  test("a call comes back with the handler's answer, separators and unicode intact", async () => {
    const pool = openPool(2);
    expect(await pool.call("hello")).toBe("HELLO");
    expect(await pool.call("a\u0001b\u0001c")).toBe("A\u0001B\u0001C");
    expect(await pool.call("grüße ✓")).toBe("GRÜSSE ✓");
    expect(await pool.call("")).toBe("");
    expect(pool.stats()).toEqual({ size: 2, busy: 0, pending: 0, restarts: 0, pinned: 0 });
  });

  test("large strings go beside the payload and come back beside the answer, unescaped, whole and in order", async () => {
    const pool = openPool(1);
    const text = `{"content":"${'grüße \\"✓\\" \u0001'.repeat(300_000)}"}`;
    const answer = await pool.exchange("beside", { texts: [text, "second", ""] });
    expect(answer).toEqual({ body: `${text.length},6,0`, texts: ["", "SECOND", text.toUpperCase()] });
    // Without any, the handler sees none, and an answer with none has none.
    expect(await pool.exchange("beside", undefined)).toEqual({ body: "none" });
    expect(await pool.exchange("beside", { texts: [] })).toEqual({ body: "none" });
    expect(await pool.exchange("plain", undefined)).toEqual({ body: "PLAIN" });
  });

  test("chunks of bytes are moved to the worker, not copied, and chunks and a blob come back", async () => {
    const pool = openPool(1);
    const owned = new Uint8Array([1, 2, 3]);
    const buffer = new Uint8Array([9, 9, 10, 20, 30, 9]);
    // A view into a larger buffer is copied before the move: the rest of that buffer stays usable here.
    const view = buffer.subarray(2, 5);
    const answer = await pool.exchange("bytes", { chunks: [owned, view] });
    expect(answer.body).toBe("3,3");
    expect(answer.chunks?.map((chunk) => [...chunk])).toEqual([
      [2, 3, 4],
      [11, 21, 31],
    ]);
    expect(await answer.blob?.text()).toBe("2");
    // The owned chunk's buffer went to the worker; the view's buffer did not.
    expect(owned.byteLength).toBe(0);
    expect([...buffer]).toEqual([9, 9, 10, 20, 30, 9]);
  });

  test("concurrent calls are spread over every worker and each gets its own answer", async () => {
    const pool = openPool(3);
    await pool.ready();
    const payloads = Array.from({ length: 300 }, (_, index) => `call-${index}`);
    const inFlight = payloads.map((payload) => pool.call(payload));
    expect(pool.stats().pending).toBe(300);
    expect(pool.stats().busy).toBe(3);
    expect(await Promise.all(inFlight)).toEqual(payloads.map((payload) => payload.toUpperCase()));

    const threads = await Promise.all(Array.from({ length: 30 }, () => pool.call("thread")));
    const perThread = new Map<string, number>();
    for (const thread of threads) perThread.set(thread, (perThread.get(thread) ?? 0) + 1);
    expect(perThread.size).toBe(3);
    expect([...perThread.values()]).toEqual([10, 10, 10]);
  });

  test(
    "calls made before the workers are up are answered, even by a worker that awaits before serving",
    async () => {
      const pool = openPool(2, SLOW_START);
      const early = await Promise.all([pool.call("a"), pool.call("b"), pool.call("c")]);
      expect(early).toEqual(["late:a", "late:b", "late:c"]);
      await pool.ready();
      expect(await pool.call("d")).toBe("late:d");
    },
    NO_HANG_MS,
  );
});

describe("WorkerPool affinity", () => {
  test("calls with one affinity key reach the same worker, so per-session state accumulates", async () => {
    const pool = openPool(3);
    await pool.ready();
    const pinned = await Promise.all(Array.from({ length: 12 }, () => pool.call("count:session-a", "session-a")));
    expect(pinned).toEqual(["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"]);

    // The control: the same calls without a key are spread, so no worker counts to 12.
    const spread = await Promise.all(Array.from({ length: 12 }, () => pool.call("count:session-b")));
    expect(Math.max(...spread.map(Number))).toBeLessThan(12);
  });

  test("new sessions go to the workers with the fewest pinned keys, and release unpins", async () => {
    const pool = openPool(3);
    await pool.ready();
    const threads = [];
    for (const key of ["a", "b", "c"]) threads.push(await pool.call("thread", key));
    expect(new Set(threads).size).toBe(3);
    expect(pool.stats().pinned).toBe(3);
    expect(await pool.call("thread", "b")).toBe(threads[1]!);

    pool.release("b");
    pool.release("unknown-key");
    expect(pool.stats().pinned).toBe(2);
  });

  test("a pinned key's load is its worker's calls in flight; none for a key pinned to no worker", async () => {
    const pool = openPool(2);
    await pool.ready();
    await pool.call("thread", "k");
    expect(pool.pinnedLoad("k")).toBe(0);
    const slow = pool.call("slow:200", "k");
    expect(pool.pinnedLoad("k")).toBe(1);
    await slow;
    expect(pool.pinnedLoad("k")).toBe(0);
    pool.release("k");
    expect(pool.pinnedLoad("k")).toBeUndefined();
  });
});

describe("WorkerPool errors", () => {
  test("a handler exception rejects that call with the handler's message and the worker keeps serving", async () => {
    const pool = openPool(1);
    const thrown = await rejectionOf(pool.call("throw"));
    expect(thrown).toBeInstanceOf(WorkerHandlerError);
    expect(thrown.name).toBe("WorkerHandlerError");
    expect(thrown.message).toBe("handler exploded");

    expect((await rejectionOf(pool.call("reject"))).message).toBe("handler rejected");
    expect((await rejectionOf(pool.call("not-a-string"))).message).toBe("worker handler returned number, expected a string or { body, texts?, chunks?, blob? }");
    expect((await rejectionOf(pool.call("bad-answer"))).message).toBe("worker handler returned object, expected a string or { body, texts?, chunks?, blob? }");

    expect(await pool.call("still alive")).toBe("STILL ALIVE");
    expect(pool.stats().restarts).toBe(0);
  });

  test(
    "a worker that exits rejects its pending calls with WorkerCrashedError and is replaced",
    async () => {
      const pool = openPool(1);
      await pool.ready();
      const pending = [pool.call("slow:60000"), pool.call("slow:60000"), pool.call("die")];
      for (const call of pending) {
        const error = await rejectionOf(call);
        expect(error).toBeInstanceOf(WorkerCrashedError);
        expect(error.name).toBe("WorkerCrashedError");
        expect(error.message).toBe('worker "test#0" exited with code 1');
      }
      expect(pool.stats()).toMatchObject({ size: 1, pending: 0, restarts: 1 });
      expect(await pool.call("after")).toBe("AFTER");
      await pool.ready();
    },
    NO_HANG_MS,
  );

  test(
    "an uncaught error outside the handler kills the worker, and its calls reject with the error",
    async () => {
      const pool = openPool(2);
      await pool.ready();
      const victim = pool.call("slow:60000", "victim");
      expect(await pool.call("crash", "victim")).toBe("crashing");
      const error = await rejectionOf(victim);
      expect(error).toBeInstanceOf(WorkerCrashedError);
      expect(error.message).toContain("uncaught outside the handler");
      await until(() => pool.stats().restarts === 1, "the replacement");
      await pool.ready();
      expect(await Promise.all([pool.call("x"), pool.call("y"), pool.call("z")])).toEqual(["X", "Y", "Z"]);
    },
    NO_HANG_MS,
  );

  test(
    "a key pinned to a dead worker keeps rejecting with WorkerCrashedError until it is released",
    async () => {
      const pool = openPool(2);
      await pool.ready();
      const before = await pool.call("thread", "session");
      expect(await pool.call("count:session", "session")).toBe("1");
      expect((await rejectionOf(pool.call("die", "session"))).name).toBe("WorkerCrashedError");

      const lost = await rejectionOf(pool.call("count:session", "session"));
      expect(lost).toBeInstanceOf(WorkerCrashedError);
      expect(lost.message).toContain('affinity key "session"');
      expect(await pool.call("unpinned")).toBe("UNPINNED");

      pool.release("session");
      expect(await pool.call("count:session", "session")).toBe("1");
      expect(await pool.call("thread", "session")).not.toBe(before);
      expect(pool.stats().restarts).toBe(1);
    },
    NO_HANG_MS,
  );

  test(
    "a worker that cannot load fails ready() and its calls instead of hanging them",
    async () => {
      const pool = openPool(1, BROKEN);
      const call = pool.call("anything");
      const notReady = await rejectionOf(pool.ready());
      expect(notReady).toBeInstanceOf(WorkerCrashedError);
      expect(notReady.message).toContain("broken at load");
      expect((await rejectionOf(call)).name).toBe("WorkerCrashedError");
      // Restarts back off, so while the replacement waits there is no worker at all.
      expect((await rejectionOf(pool.call("anything"))).name).toBe("WorkerCrashedError");
    },
    NO_HANG_MS,
  );
});

describe("WorkerPool lifecycle", () => {
  test(
    "close() rejects pending calls and every later call with WorkerPoolClosedError",
    async () => {
      const pool = openPool(2);
      await pool.ready();
      const pending = [pool.call("slow:60000"), pool.call("slow:60000", "session")];
      expect(pool.stats().pending).toBe(2);
      const closing = pool.close();
      for (const call of pending) {
        const error = await rejectionOf(call);
        expect(error).toBeInstanceOf(WorkerPoolClosedError);
        expect(error.name).toBe("WorkerPoolClosedError");
      }
      await closing;
      expect(pool.close()).toBe(closing);
      expect((await rejectionOf(pool.call("late"))).name).toBe("WorkerPoolClosedError");
      expect((await rejectionOf(pool.ready())).name).toBe("WorkerPoolClosedError");
      expect(pool.stats()).toEqual({ size: 2, busy: 0, pending: 0, restarts: 0, pinned: 0 });
    },
    NO_HANG_MS,
  );

  test("the pool size must be a positive integer and defaults to the cores minus one, at most 8", () => {
    expect(() => new WorkerPool({ workerUrl: ECHO, size: 0 })).toThrow(RangeError);
    expect(() => new WorkerPool({ workerUrl: ECHO, size: 1.5 })).toThrow(RangeError);
    const size = defaultWorkerPoolSize();
    expect(size).toBe(Math.min(8, Math.max(1, navigator.hardwareConcurrency - 1)));
  });

  test("an idle pool does not keep the process alive, and a call in flight does", async () => {
    const run = async (mode: string) => {
      const child = Bun.spawn([process.execPath, LIFETIME_SCRIPT.pathname, mode], { stdout: "pipe", stderr: "pipe" });
      const timer = setTimeout(() => child.kill(), 10_000);
      const [stdout, exitCode] = await Promise.all([new Response(child.stdout).text(), child.exited]);
      clearTimeout(timer);
      return { stdout, exitCode };
    };
    expect(await run("idle")).toEqual({ stdout: "", exitCode: 0 });
    expect(await run("call")).toEqual({ stdout: "reply slept 300\n", exitCode: 0 });
  }, 25_000);
});

describe("memory after a large call", () => {
  const WEAK_REF = new URL("./fixtures/weak-ref.worker.ts", import.meta.url);

  test("a worker's garbage is collected right after a call of a megabyte or more, though the worker then idles", async () => {
    const pool = openPool(1, WEAK_REF);
    expect(await pool.call("grow")).toBe("grown");
    expect(await pool.call(`hold${"x".repeat(1 << 20)}`)).toBe(String(4 + (1 << 20)));
    expect(await pool.call("check")).toBe("collected");
    expect(await pool.call("forced")).toBe("1");
  });

  // The heap's own collector may run at any time (the 64 MB above can schedule one), so
  // whether a small call's garbage is still alive proves nothing; what must not happen is
  // a collection the worker forces for it.
  test("after a small call the worker's heap is left to its collector (no collection per call)", async () => {
    const pool = openPool(1, WEAK_REF);
    expect(await pool.call("grow")).toBe("grown");
    expect(await pool.call("hold-small")).toBe("10");
    expect(await pool.call(`hold${"x".repeat((1 << 20) - 100)}`)).toBe(String(4 + (1 << 20) - 100));
    expect(await pool.call("forced")).toBe("0");
  });
});
