import { loadConfig, meteringWriteConnections, type Config } from "./config";
import { connectDatabase, type Database } from "./db/connect-database";
import { makeDataDirPrivate } from "./db/private-data-dir";
import { loadMigrations, migrate } from "./db/migrate";
import { prepareNamedQueries } from "./db/named-queries";
import { startRequestPartitionMaintenance } from "./db/request-partitions";
import { CredentialResolver } from "./identity/credential-resolver";
import { LastUsedTracker } from "./identity/last-used-tracker";
import { startEventLoopDelayProbe } from "./observability/event-loop-delay";
import { Gauge, Metrics } from "./observability/metrics";
import { createApp } from "./app";
import { createRequestHooks } from "./http/request-hooks";
import { BodyBudget } from "./http/body-budget";
import { IdleCollector } from "./http/idle-collector";
import { inferenceServeRoutes } from "./inference/inference-routes";
import { bodyLimits } from "./inference/body-limits";
import { withRoutableUrl } from "./http/request-path";
import { rememberClientAddress } from "./http/client-address";
import { AuthThrottle } from "./identity/auth-throttle";
import { ApiError, errorResponse } from "./errors/api-error";
import { log, setLogLevel } from "./observability/log";
import { TRACING_OFF } from "./observability/tracing";
import type { RequestTracing } from "./observability/request-trace";
import type { Services } from "./services";
import { loadCatalog } from "./providers/catalog";
import { EndpointStats } from "./routing/endpoint-stats";
import { ConnectCheck } from "./routing/connect-check";
import { ShardedWriteBuffer } from "./db/batch/sharded-write-buffer";
import { createMeteringSink } from "./metering/metering-sink";
import { MeNamespace } from "./identity/me-namespace";
import { WalletLeases } from "./admission/wallet-leases";
import { PendingSettlements } from "./metering/pending-settlements";
import { RefusalSampler } from "./metering/refusal-sampler";
import { AutoTranslator, InlineTranslator, PooledTranslator, type Translator } from "./translation/translator";
import { WorkerPool } from "./workers/worker-pool";
import { PolicyStore } from "./policy/policy-store";
import { RoutingPresetStore } from "./routing/routing-preset-store";
import { InFlightRequests } from "./pipeline/in-flight-requests";
import { PlatformKeys } from "./funding/platform-keys";
import { AccountKeysThenPlatform } from "./funding/account-keys";
import { WalletCheck } from "./admission/wallet-check";
import { AdmissionChain } from "./admission/admission-chain";
import { GuardrailCheck } from "./admission/guardrail-check";
import { DEFAULT_LEASE_SETTINGS } from "./admission/counter-leases";
import { PolicyCounters } from "./admission/policy-counters";
import { KekStore } from "./byok/kek-store";
import { ByokKeyStore } from "./byok/byok-key-store";
import { decodeMasterKey, loadMasterKey } from "./byok/master-key";
import { EgressGuard, type HostResolver } from "./egress/egress-guard";
import { parseAllowList } from "./egress/allow-list";
import { reportListening, serverProcessNumber } from "./server-processes";
import { Readiness, type DatabaseProbe } from "./observability/readiness";
import { pendingMigrationVersions } from "./db/queries/health";
import { AccountReadGate, readsPerProcess } from "./http/account-read-gate";
import { AnswerBytes } from "./routing/answer-bytes";

const TRANSLATE_WORKER = new URL("../workers/translate.worker.ts", import.meta.url);

async function createTranslator(config: Config): Promise<Translator> {
  if (config.translationMode === "inline") return new InlineTranslator();
  const pool = new WorkerPool({ workerUrl: TRANSLATE_WORKER, size: Math.max(1, config.workerPoolSize), name: "translate" });
  await pool.ready();
  const pooled = new PooledTranslator(pool);
  return config.translationMode === "pool" ? pooled : new AutoTranslator(pooled, config.translationInlineMaxBytes);
}

/** The database half of GET /ready: it answers, and has applied every migration this code knows. */
function readinessProbe(sql: Database["sql"], knownVersions: readonly number[]): DatabaseProbe {
  return async () => ((await pendingMigrationVersions(sql, knownVersions)).length === 0 ? undefined : "migrations_pending");
}

/**
 * What the two memory bounds on large bodies hold now, for an operator sizing
 * BODY_MEMORY_BUDGET_BYTES and UPSTREAM_ANSWER_BYTES_PER_ACCOUNT (docs/configuration.md):
 * requests waiting for room are the sign of a budget too small for the traffic.
 */
function trackMemoryBounds(metrics: Metrics, bodyBudget: BodyBudget, answerBytes: AnswerBytes): void {
  metrics.register(new Gauge("switchyard_body_budget_held_bytes", "Weight of the large request bodies held in memory now (BODY_MEMORY_BUDGET_BYTES bounds it).")).track([], () => bodyBudget.stats().heldBytes);
  metrics.register(new Gauge("switchyard_body_budget_waiting", "Requests whose large body waits for room in the body budget.")).track([], () => bodyBudget.stats().waiting);
  metrics.register(new Gauge("switchyard_large_answer_bytes", "Bytes of large upstream answers (over 1 MiB each) in flight, all accounts (UPSTREAM_ANSWER_BYTES_PER_ACCOUNT bounds each account's).")).track([], () => answerBytes.heldTotal());
}

/** How long streams ended at the grace limit get to settle, and then to deliver their error frame, before connections close. */
const STREAM_END_FLUSH_MS = 1_000;

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  /**
   * Graceful stop: `/ready` answers 503 at once; with `delayMs` (and a process something
   * has probed for readiness) the listener keeps serving that long so a balancer moves
   * away; then stop accepting, let in-flight requests finish (bounded), flush buffers,
   * close the database.
   */
  shutdown(options?: ShutdownOptions): Promise<void>;
}

export interface ShutdownOptions {
  /** The drain delay (SHUTDOWN_DELAY_MS); none when absent, as for in-process tests. */
  delayMs?: number;
}

/** Parts a test replaces: the name resolver the egress guard asks (else the system's), the named queries' folder. */
export interface ServerParts {
  resolveHost?: HostResolver;
  /** The folder of named queries checked at boot (else sql/queries). */
  namedQueriesDir?: string;
  /** Request traces (main.ts starts them from the environment); the caller shuts them down. Else none. */
  tracing?: RequestTracing;
}

/** Builds every service, migrates, and listens. Used by main.ts and by in-process tests. */
export async function startServer(overrides: Partial<Config> = {}, parts: ServerParts = {}): Promise<RunningServer> {
  const config = { ...loadConfig(), ...overrides };
  setLogLevel(config.logLevel);
  // The catalog and the egress allow list are validated before anything else starts: a bad entry stops the process, named.
  const catalog = loadCatalog(config.providersFile);
  const egress = new EgressGuard(parseAllowList(config.byokApiBaseAllow), parts.resolveHost, config.upstreamTimeouts.connectMs);
  const db = await connectDatabase(config);
  const migrations = loadMigrations();
  await migrate(db.sql, migrations);
  // Every named query is prepared once now: a broken one stops the start, named.
  try {
    await prepareNamedQueries(db.sql, parts.namedQueriesDir);
  } catch (error) {
    await db.close();
    throw error;
  }
  const lastUsed = new LastUsedTracker(db.sql);
  lastUsed.start();
  startRequestPartitionMaintenance(db.sql, config.requestRetentionMonths);
  const metrics = new Metrics();
  // Which process answered a scrape: with SERVER_PROCESSES > 1 each has its own /metrics.
  const processNumber = serverProcessNumber();
  metrics.register(new Gauge("switchyard_process", "This server process: its pid and its number among SERVER_PROCESSES (1 when alone).", ["pid", "process"])).track([String(process.pid), processNumber ?? "1"], () => 1);
  const loopDelay = startEventLoopDelayProbe(metrics);
  const writeBuffer = new ShardedWriteBuffer(db.sql, meteringWriteConnections(config, db.kind), { metrics, flushIntervalMs: Math.max(1, config.meteringFlushIntervalMs) });
  const walletLeases = new WalletLeases(db.sql, { ttlSeconds: config.admissionLeaseTtlSecs, tickMs: config.admissionTickMs });
  walletLeases.start();
  const policyCounters = new PolicyCounters(db.sql, {
    holdTtlSecs: config.admissionLeaseTtlSecs,
    tickMs: config.admissionTickMs,
    ...(config.admissionLeases ? { leases: DEFAULT_LEASE_SETTINGS } : {}),
  });
  policyCounters.start();
  const masterKey = () => {
    // A generated key lives in DATA_DIR: keep the folder private first (docs/configuration.md "Configuration (a contract: outside tests rely on these names)").
    if (config.byokMasterKey === undefined) makeDataDirPrivate(config.dataDir);
    return loadMasterKey(config.byokMasterKey, config.dataDir);
  };
  // A malformed BYOK_MASTER_KEY stops the start; an unset one is generated on first BYOK use.
  if (config.byokMasterKey !== undefined) masterKey();
  const previousMasterKey = config.byokMasterKeyPrevious === undefined ? undefined : decodeMasterKey(config.byokMasterKeyPrevious, "BYOK_MASTER_KEY_PREVIOUS");
  const refusals = new RefusalSampler(db.sql, config.refusedRecordsPerMinute);
  refusals.start();
  const keks = new KekStore(db.sql, masterKey, previousMasterKey);
  const byokKeys = new ByokKeyStore(db.sql, keks, config.credentialCacheTtlMs);
  const services: Services = {
    config,
    db,
    readiness: new Readiness(readinessProbe(db.sql, migrations.map((migration) => migration.version))),
    lastUsed,
    credentials: new CredentialResolver(db.sql, config.credentialCacheTtlMs, lastUsed),
    metrics,
    catalog,
    endpointStats: new EndpointStats({ snapshotTtlMs: 1_000 }),
    translator: await createTranslator(config),
    connectCheck: new ConnectCheck(config.upstreamTimeouts.connectMs),
    writeBuffer,
    // COPY needs a real PostgreSQL: the embedded database's socket bridge does not speak it.
    meteringSink: createMeteringSink(writeBuffer, { copy: db.kind === "postgres" }),
    me: new MeNamespace(db.sql),
    walletLeases,
    pendingSettlements: new PendingSettlements(),
    answerBytes: new AnswerBytes(config.upstreamAnswerBytesPerAccount),
    refusals,
    policies: new PolicyStore(db.sql, config.credentialCacheTtlMs),
    routingPresets: new RoutingPresetStore(db.sql, config.credentialCacheTtlMs),
    inFlight: new InFlightRequests(),
    keks,
    byokKeys,
    throttle: new AuthThrottle(db.sql),
    egress,
    accountReads: new AccountReadGate(readsPerProcess(config.accountConcurrentReads, config.serverProcesses)),
    tracing: parts.tracing ?? TRACING_OFF,
    funding: new AccountKeysThenPlatform(byokKeys, new PlatformKeys(catalog)),
    // Guardrails first (pure CPU), then the counters, then the wallet: a refusal undoes as
    // little as possible. METERING=off records and charges nothing, so there is no charge
    // for the wallet to guard (docs/architecture.md "Metering"); policies still apply.
    admission: new AdmissionChain([new GuardrailCheck(), policyCounters], config.meteringEnabled ? [new WalletCheck(walletLeases)] : []),
  };
  const bodyBudget = new BodyBudget(config.bodyMemoryBudgetBytes);
  trackMemoryBounds(metrics, bodyBudget, services.answerBytes);
  const hooks = createRequestHooks(services.metrics, bodyLimits(config), bodyBudget, new IdleCollector());
  const app = createApp(services, hooks);
  // Everything that is not an inference path goes to Elysia, with the peer's address noted
  // for the sign-in and user-code throttles.
  const handleInApp = (request: Request, peer: Bun.Server<undefined>) => {
    const routable = withRoutableUrl(request);
    rememberClientAddress(routable, peer.requestIP(request)?.address);
    return app.handle(routable);
  };
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // Off in effect: every body is read within its route's limit by our code (request-body.ts),
    // which answers 413 in the route's own shape. Bun's cap would answer first, with an
    // empty body, for any Content-Length above it.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    idleTimeout: 255,
    // SERVER_PROCESSES > 1: every server process listens on the same port.
    reusePort: config.serverProcesses > 1,
    // The inference paths are matched by Bun itself; everything else (and every other
    // method on those paths) goes through Elysia.
    routes: inferenceServeRoutes(services, hooks, (request, peer) => handleInApp(request, peer)),
    fetch: handleInApp,
    error: () => errorResponse(new ApiError("internal", "internal error")),
  });
  const port = server.port!;
  log.info("listening", { port, database: db.kind, pid: process.pid, ...(processNumber === undefined ? {} : { process: processNumber }) });
  reportListening();

  let stopping: Promise<void> | undefined;
  const shutdown = (options: ShutdownOptions = {}) =>
    (stopping ??= (async () => {
      services.readiness.markStopping();
      // A balancer checking /ready now sees 503; until it has moved away, keep serving
      // what it still sends, so that no connection is refused (docs/operations.md "Readiness and drain").
      const delayMs = services.readiness.probed ? (options.delayMs ?? 0) : 0;
      if (delayMs > 0) {
        log.info("not ready; serving until the drain delay ends", { delay_ms: delayMs });
        await Bun.sleep(delayMs);
      }
      // Closing the listener frees the port at once; open connections finish.
      const drained = server.stop(false);
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownGraceMs).unref?.());
      await Promise.race([drained, deadline]);
      // What is still in flight ends cleanly and is settled (streams with their protocol's
      // error frame, requests awaiting an upstream with a 503), then gets a moment to reach
      // its clients before the remaining connections are closed.
      const open = server.pendingRequests;
      if (open > 0) {
        log.warn("requests ended by shutdown", { requests: open, streams: services.inFlight.openStreams });
        await Promise.race([services.inFlight.endAll(), Bun.sleep(STREAM_END_FLUSH_MS)]);
        await Promise.race([drained, Bun.sleep(STREAM_END_FLUSH_MS)]);
      }
      server.stop(true);
      loopDelay.stop();
      await lastUsed.stop();
      await byokKeys.flushUses();
      // Every buffered record, frame and ledger entry, and every refusal counted instead of recorded, is written before the database closes.
      await writeBuffer.stop();
      await refusals.stop();
      // Then the unused part of every wallet lease goes back to its wallet.
      await walletLeases.stop();
      // Settlements of budget and rate-limit grants the database refused get a last try.
      await policyCounters.stop();
      await services.translator.close();
      await db.close();
      log.info("stopped");
    })());

  return { url: `http://127.0.0.1:${port}`, port, services, shutdown };
}
