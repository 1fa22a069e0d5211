import { availableParallelism } from "node:os";

/**
 * Process configuration, read once from the environment. The variable names are a
 * contract that outside tests rely on (docs/configuration.md "Configuration (a contract: outside tests rely on these names)"): keep them stable.
 */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /**
   * DATABASE_READ_URL: where the read pool connects, a streaming replica of DATABASE_URL's
   * database (docs/operations.md "A read replica"). Unset: the read pool uses DATABASE_URL.
   */
  databaseReadUrl: string | undefined;
  dataDir: string;
  providersFile: string | undefined;
  adminToken: string | undefined;
  /**
   * A second operator token accepted alongside ADMIN_TOKEN while a new one is rolled out
   * (docs/operations.md "Rotating ADMIN_TOKEN and BYOK_MASTER_KEY without downtime"); unset outside a rotation.
   */
  adminTokenPrevious: string | undefined;
  /**
   * When set, `/metrics` answers only `Authorization: Bearer <token>`: its series show every
   * provider's traffic and error rates. Unset: `/metrics` is open, as before.
   */
  metricsToken: string | undefined;
  /**
   * Base64 of 32 bytes wrapping the BYOK key-encryption keys stored in the database; every
   * instance sharing the database needs the same one. Unset: generated once into DATA_DIR.
   */
  byokMasterKey: string | undefined;
  /**
   * The master key being retired during a rotation: KEKs it wrapped still unwrap, new KEKs
   * are wrapped with BYOK_MASTER_KEY (docs/operations.md "Rotating ADMIN_TOKEN and BYOK_MASTER_KEY without downtime"); unset outside one.
   */
  byokMasterKeyPrevious: string | undefined;
  publicUrl: string;
  /**
   * Private destinations a customer-supplied upstream address (a BYOK `api_base`) may name:
   * `host`, `host:port` or CIDR entries (src/egress/allow-list.ts); http:// is allowed for
   * them. Empty: only public https destinations.
   */
  byokApiBaseAllow: string[];
  /**
   * Reverse proxies in front of the service that append the client's address to
   * `X-Forwarded-For`; 0 (the default) trusts no such header and uses the peer address.
   */
  trustedProxyHops: number;
  /** How long a resolved credential is trusted before it is checked against the database again. */
  credentialCacheTtlMs: number;
  /** Largest accepted request body for inference endpoints (base64 images are large). */
  maxInferenceBodyBytes: number;
  /** The most of one upstream answer (non-streaming) read into memory; past it the answer is a 502. */
  maxUpstreamBodyBytes: number;
  /** Bytes of large whole upstream answers (over 1 MiB each) one account's requests may have in flight on this process; 0: no bound. */
  upstreamAnswerBytesPerAccount: number;
  /** Largest accepted request body for management endpoints. */
  maxManagementBodyBytes: number;
  /**
   * Bytes of large request bodies (over 1 MiB each) held at once, summed over the requests
   * in progress; one that does not fit waits its turn (src/http/body-budget.ts). 0: no budget.
   */
  bodyMemoryBudgetBytes: number;
  /**
   * Server processes sharing the port (SERVER_PROCESSES; `auto`: one per core). More than
   * one needs DATABASE_URL, the only thing they share, and a fixed PORT (src/server-processes.ts).
   */
  serverProcesses: number;
  /** Time SIGTERM gives in-flight requests before the process exits anyway. */
  shutdownGraceMs: number;
  /**
   * The drain delay (SHUTDOWN_DELAY_MS): after SIGTERM, `/ready` answers 503 at once and the
   * listener keeps accepting and serving for this long, so a balancer checking `/ready` sees
   * the 503 and moves away before any connection is refused; then the grace period starts.
   * Only a process that has answered a `/ready` probe waits: one nothing routes by
   * readiness stops accepting at once. 0: never wait.
   */
  shutdownDelayMs: number;
  /**
   * A committed stream whose client has read nothing for this long (its buffer full) is
   * ended: the upstream is aborted and the request settled as cancelled. 0: never.
   */
  streamStallTimeoutMs: number;
  /**
   * Wallet leases and budget holds of an instance that died (SIGKILL, a lost host) are no
   * longer renewed: they expire after ADMISSION_LEASE_TTL_SECS and the next maintenance tick
   * of any live instance (every ADMISSION_TICK_MS) sweeps them, so a dead instance's
   * reservations are back in the wallet within TTL + tick. The TTL must cover two ticks.
   */
  admissionLeaseTtlSecs: number;
  admissionTickMs: number;
  /** Client pool size for a real PostgreSQL (the embedded one always gets 1). */
  databasePoolSize: number;
  /**
   * The read pool's size (DATABASE_READ_POOL_SIZE): the connections that serve request
   * history, usage, the console's overview and export, and the public statistics, apart
   * from the pool that admits, settles and writes (src/db/README.md, "Two pools").
   */
  databaseReadPoolSize: number;
  /**
   * READ_STATEMENT_TIMEOUT_MS: PostgreSQL stops a statement on the read pool after this long
   * (`statement_timeout`), and the caller gets a 503 saying how to narrow the query. 0: no limit.
   */
  readStatementTimeoutMs: number;
  /**
   * ACCOUNT_CONCURRENT_READS: expensive management reads (history, usage, daily usage, the
   * console's overview and CSV export) one account may have in flight on this instance,
   * divided among its SERVER_PROCESSES; one more is a 429 (src/http/account-read-gate.ts).
   */
  accountConcurrentReads: number;
  /**
   * REFUSED_RECORDS_PER_MINUTE: requests refused before any upstream call (an invalid
   * body, an unknown model, admission's 402, 403 and 429) that get a record of their own,
   * per account and minute on the whole database; the rest are only counted
   * (src/metering/refusal-sampler.ts). 0: none get a record.
   */
  refusedRecordsPerMinute: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
  /** Request records, charges and wallet reservations. Off only for benchmarks (METERING=off). */
  meteringEnabled: boolean;
  /** Leases of room on hot budget and rate-limit keys far from their limits (src/admission/counter-leases.ts); ADMISSION_LEASES=off judges every request in the database. */
  admissionLeases: boolean;
  /** Longest a metering row waits in memory before its batch is written. */
  meteringFlushIntervalMs: number;
  /**
   * Metering flushes that run at once, each on its own connection, rows sharded by
   * account (a real PostgreSQL only, and at most the pool size less one).
   */
  meteringWriteConnections: number;
  /**
   * REQUEST_RETENTION_MONTHS: request records are kept at least this many months, and a
   * month's partition is dropped whole once it is older (src/db/request-partitions.ts).
   * Undefined (unset, the default): every record is kept.
   */
  requestRetentionMonths: number | undefined;
  /**
   * Where protocol translation runs: "auto" (small payloads inline, large ones in the
   * worker pool — the benchmark's answer), "pool" (always workers) or "inline".
   */
  translationMode: "auto" | "pool" | "inline";
  /** With "auto": bodies up to this size are translated on the request thread. */
  translationInlineMaxBytes: number;
  /** Worker threads in the translation pool. */
  workerPoolSize: number;
  /**
   * Lifetimes of what the OAuth authorization server issues. Not read from the
   * environment: clients rely on them (the CLI refreshes an hour-long token); tests shorten them.
   */
  oauthLifetimes: OauthLifetimes;
  /**
   * A console session ends this long after its sign-in, however often it is used (its
   * idle expiry of 12 hours slides only up to here). Not read from the environment; tests
   * shorten it.
   */
  consoleSessionMaxAgeMs: number;
  upstreamTimeouts: {
    /** Establishing a TCP connection to an upstream origin. */
    connectMs: number;
    /** Until the upstream's response head: connection, request and first byte. */
    firstByteMs: number;
    /** Between two chunks of an upstream body. */
    idleMs: number;
  };
}

export interface OauthLifetimes {
  /** A device code and its user code (RFC 8628 `expires_in`). */
  deviceCodeSecs: number;
  /** The poll interval a device authorization starts with; every `slow_down` adds 5 s. */
  devicePollIntervalSecs: number;
  /** An authorization code, between consent and its exchange. */
  authorizationCodeSecs: number;
  /** A `bra_` access token. */
  accessTokenSecs: number;
  /** A refresh token; every refresh starts a new one. */
  refreshTokenSecs: number;
}

/** Seven days from sign-in. */
export const DEFAULT_CONSOLE_SESSION_MAX_AGE_MS = 7 * 24 * 3600 * 1000;

export const DEFAULT_OAUTH_LIFETIMES: OauthLifetimes = {
  deviceCodeSecs: 600,
  devicePollIntervalSecs: 5,
  authorizationCodeSecs: 60,
  accessTokenSecs: 3600,
  refreshTokenSecs: 30 * 24 * 3600,
};

function integer(name: string, fallback: number, env: Record<string, string | undefined>): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

/** A whole number of at least 1: a pool or a cap of 0 would stop every read it governs. */
function positive(name: string, fallback: number, env: Record<string, string | undefined>): number {
  const value = integer(name, fallback, env);
  if (value < 1) throw new Error(`${name} must be a positive integer, got "${env[name]}"`);
  return value;
}

function translationMode(raw: string | undefined): Config["translationMode"] {
  if (raw === undefined || raw === "" || raw === "auto") return "auto";
  if (raw === "pool" || raw === "inline") return raw;
  throw new Error(`TRANSLATION_MODE must be "auto", "pool" or "inline", got "${raw}"`);
}

/** REQUEST_RETENTION_MONTHS: a positive whole number of months, or unset to keep every record. */
function retentionMonths(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new Error(`REQUEST_RETENTION_MONTHS must be a positive number of months (unset keeps every record), got "${raw}"`);
  }
  return Number(raw);
}

/** SERVER_PROCESSES: a positive integer or `auto` (one per core); more than one needs a database they can share and a fixed port. */
function serverProcesses(env: Record<string, string | undefined>, port: number): number {
  const raw = env.SERVER_PROCESSES;
  const count = raw === undefined || raw === "" ? 1 : raw === "auto" ? availableParallelism() : /^[0-9]+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`SERVER_PROCESSES must be a positive integer or "auto", got "${raw}"`);
  if (count > 1 && !env.DATABASE_URL) {
    throw new Error(`SERVER_PROCESSES=${raw} needs DATABASE_URL: the embedded database serves one process only`);
  }
  if (count > 1 && port === 0) throw new Error(`SERVER_PROCESSES=${raw} needs a fixed PORT: the processes share one port`);
  return count;
}

/**
 * DATABASE_READ_URL: a replica of the database at DATABASE_URL. Without DATABASE_URL there is
 * nothing for it to replicate (the embedded database is one process's own file), and a read
 * pool there while everything else writes into PGlite would show another database's history.
 */
function databaseReadUrl(env: Record<string, string | undefined>): string | undefined {
  const url = env.DATABASE_READ_URL || undefined;
  if (url !== undefined && !env.DATABASE_URL) {
    throw new Error("DATABASE_READ_URL is set but DATABASE_URL is not: a read replica needs the PostgreSQL it replicates in DATABASE_URL (the embedded database has no replicas)");
  }
  return url;
}

/** A `…_PREVIOUS` secret only means something next to the one it precedes. */
function previousOf(name: string, env: Record<string, string | undefined>): string | undefined {
  const previous = env[`${name}_PREVIOUS`] || undefined;
  if (previous !== undefined && !env[name]) throw new Error(`${name}_PREVIOUS is set but ${name} is not: set the new value in ${name}`);
  return previous;
}

/** ADMISSION_LEASE_TTL_SECS and ADMISSION_TICK_MS: a lease renewed every tick must outlive two of them. */
function admissionTiming(env: Record<string, string | undefined>): { admissionLeaseTtlSecs: number; admissionTickMs: number } {
  const admissionLeaseTtlSecs = integer("ADMISSION_LEASE_TTL_SECS", 30, env);
  const admissionTickMs = integer("ADMISSION_TICK_MS", 5_000, env);
  if (admissionTickMs < 1) throw new Error(`ADMISSION_TICK_MS must be a positive integer, got "${env.ADMISSION_TICK_MS}"`);
  if (admissionLeaseTtlSecs * 1000 < 2 * admissionTickMs) {
    throw new Error(`ADMISSION_LEASE_TTL_SECS (${admissionLeaseTtlSecs} s) must be at least two ADMISSION_TICK_MS (${admissionTickMs} ms): leases are renewed once a tick`);
  }
  return { admissionLeaseTtlSecs, admissionTickMs };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = integer("PORT", 8080, env);
  const logLevel = (env.LOG_LEVEL ?? "info") as Config["logLevel"];
  if (!["debug", "info", "warn", "error", "silent"].includes(logLevel)) throw new Error(`LOG_LEVEL "${logLevel}" is not a level`);
  return {
    port,
    host: env.HOST || "0.0.0.0",
    databaseUrl: env.DATABASE_URL || undefined,
    databaseReadUrl: databaseReadUrl(env),
    dataDir: env.DATA_DIR || "./.data",
    providersFile: env.PROVIDERS_FILE || undefined,
    adminToken: env.ADMIN_TOKEN || undefined,
    adminTokenPrevious: previousOf("ADMIN_TOKEN", env),
    metricsToken: env.METRICS_TOKEN || undefined,
    byokMasterKey: env.BYOK_MASTER_KEY || undefined,
    byokMasterKeyPrevious: previousOf("BYOK_MASTER_KEY", env),
    byokApiBaseAllow: (env.BYOK_API_BASE_ALLOW ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== ""),
    publicUrl: (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ""),
    trustedProxyHops: integer("TRUSTED_PROXY_HOPS", 0, env),
    credentialCacheTtlMs: integer("CREDENTIAL_CACHE_TTL_MS", 5_000, env),
    maxInferenceBodyBytes: integer("MAX_INFERENCE_BODY_BYTES", 32 * 1024 * 1024, env),
    maxManagementBodyBytes: integer("MAX_MANAGEMENT_BODY_BYTES", 256 * 1024, env),
    maxUpstreamBodyBytes: integer("MAX_UPSTREAM_BODY_BYTES", 64 * 1024 * 1024, env),
    upstreamAnswerBytesPerAccount: integer("UPSTREAM_ANSWER_BYTES_PER_ACCOUNT", 128 * 1024 * 1024, env),
    bodyMemoryBudgetBytes: integer("BODY_MEMORY_BUDGET_BYTES", 32 * 1024 * 1024, env),
    serverProcesses: serverProcesses(env, port),
    shutdownGraceMs: integer("SHUTDOWN_GRACE_MS", 20_000, env),
    // A balancer checking every 1-2 s that marks a server down after 2 failed checks
    // (HAProxy `inter 1s fall 2`, a Kubernetes readiness probe at periodSeconds 2) has
    // moved away within about 4 s.
    shutdownDelayMs: integer("SHUTDOWN_DELAY_MS", 5_000, env),
    streamStallTimeoutMs: integer("STREAM_STALL_TIMEOUT_MS", 30_000, env),
    ...admissionTiming(env),
    databasePoolSize: integer("DATABASE_POOL_SIZE", 10, env),
    databaseReadPoolSize: positive("DATABASE_READ_POOL_SIZE", 4, env),
    readStatementTimeoutMs: integer("READ_STATEMENT_TIMEOUT_MS", 5_000, env),
    accountConcurrentReads: positive("ACCOUNT_CONCURRENT_READS", 4, env),
    refusedRecordsPerMinute: integer("REFUSED_RECORDS_PER_MINUTE", 60, env),
    logLevel,
    meteringEnabled: env.METERING !== "off",
    admissionLeases: env.ADMISSION_LEASES !== "off",
    meteringFlushIntervalMs: integer("METERING_FLUSH_INTERVAL_MS", 100, env),
    meteringWriteConnections: integer("METERING_WRITE_CONNECTIONS", 2, env),
    requestRetentionMonths: retentionMonths(env.REQUEST_RETENTION_MONTHS),
    translationMode: translationMode(env.TRANSLATION_MODE),
    translationInlineMaxBytes: integer("TRANSLATION_INLINE_MAX_BYTES", 16 * 1024, env),
    workerPoolSize: integer("WORKER_POOL_SIZE", 2, env),
    oauthLifetimes: DEFAULT_OAUTH_LIFETIMES,
    consoleSessionMaxAgeMs: DEFAULT_CONSOLE_SESSION_MAX_AGE_MS,
    upstreamTimeouts: {
      connectMs: integer("UPSTREAM_CONNECT_TIMEOUT_MS", 5_000, env),
      firstByteMs: integer("UPSTREAM_FIRST_BYTE_TIMEOUT_MS", 60_000, env),
      idleMs: integer("UPSTREAM_IDLE_TIMEOUT_MS", 60_000, env),
    },
  };
}

/**
 * How many metering flushes run at once: METERING_WRITE_CONNECTIONS on a real PostgreSQL,
 * leaving at least one pooled connection for everything else; the embedded database has
 * one connection, so one.
 */
export function meteringWriteConnections(config: Pick<Config, "meteringWriteConnections" | "databasePoolSize">, database: "postgres" | "embedded"): number {
  if (database !== "postgres") return 1;
  return Math.max(1, Math.min(config.meteringWriteConnections, config.databasePoolSize - 1));
}
