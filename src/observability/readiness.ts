/** Why `GET /ready` answers 503 (its `reason`). */
export type NotReadyReason = "shutting_down" | "database_unreachable" | "migrations_pending";

export type ReadinessState = { ready: true } | { ready: false; reason: NotReadyReason };

/** What the database says: undefined when it answers with every migration applied, else why not. */
export type DatabaseProbe = () => Promise<NotReadyReason | undefined>;

export interface ReadinessTiming {
  /** A database answer is reused for this long: a balancer's probes cost one query per moment, not one each. */
  cacheMs: number;
  /** A database that has not answered within this long is unreachable; the probe never waits longer. */
  timeoutMs: number;
}

const DEFAULT_TIMING: ReadinessTiming = { cacheMs: 500, timeoutMs: 2_000 };

const SHUTTING_DOWN: ReadinessState = { ready: false, reason: "shutting_down" };
const UNREACHABLE: ReadinessState = { ready: false, reason: "database_unreachable" };

/**
 * `GET /ready` (docs/operations.md "Readiness and drain"): ready while the database answers and has every
 * migration this code knows applied, not ready at once and for good after `markStopping`
 * (SIGTERM). The database is asked at most once per `cacheMs`, and never by two probes at
 * a time; a probe that has not answered within `timeoutMs` reads as unreachable, and no
 * second query starts while it still hangs, so a dead database costs one pool connection.
 */
export class Readiness {
  private stopping = false;
  private probedOnce = false;
  private cached: { at: number; state: ReadinessState } | undefined;
  private evaluating: Promise<ReadinessState> | undefined;
  private outstanding: Promise<unknown> | undefined;

  constructor(
    private readonly probe: DatabaseProbe,
    private readonly timing: ReadinessTiming = DEFAULT_TIMING,
  ) {}

  /** From now on every check answers `shutting_down`. */
  markStopping(): void {
    this.stopping = true;
  }

  /** True once something has asked `/ready`: a balancer or orchestrator routes by it, so shutdown waits for it to move away. */
  get probed(): boolean {
    return this.probedOnce;
  }

  async check(): Promise<ReadinessState> {
    this.probedOnce = true;
    if (this.stopping) return SHUTTING_DOWN;
    const cached = this.cached;
    if (cached !== undefined && performance.now() - cached.at < this.timing.cacheMs) return cached.state;
    this.evaluating ??= this.evaluate().finally(() => (this.evaluating = undefined));
    const state = await this.evaluating;
    return this.stopping ? SHUTTING_DOWN : state;
  }

  private async evaluate(): Promise<ReadinessState> {
    // The previous query still hangs: the database has not answered for a whole timeout.
    if (this.outstanding !== undefined) return this.remember(UNREACHABLE);
    const query = this.probe().then(
      (reason): ReadinessState => (reason === undefined ? { ready: true } : { ready: false, reason }),
      (): ReadinessState => UNREACHABLE,
    );
    this.outstanding = query;
    void query.finally(() => {
      if (this.outstanding === query) this.outstanding = undefined;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<ReadinessState>((resolve) => (timer = setTimeout(() => resolve(UNREACHABLE), this.timing.timeoutMs)));
    try {
      return this.remember(await Promise.race([query, timedOut]));
    } finally {
      clearTimeout(timer);
    }
  }

  private remember(state: ReadinessState): ReadinessState {
    this.cached = { at: performance.now(), state };
    return state;
  }
}
