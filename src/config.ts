/**
 * Process configuration, read once from the environment. The variable names are a
 * contract that outside tests rely on (DESIGN.md "Contracts"): keep them stable.
 */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  providersFile: string | undefined;
  adminToken: string | undefined;
  publicUrl: string;
  /** How long a resolved credential is trusted before it is checked against the database again. */
  credentialCacheTtlMs: number;
  /** Largest accepted request body for inference endpoints (base64 images are large). */
  maxInferenceBodyBytes: number;
  /** Largest accepted request body for management endpoints. */
  maxManagementBodyBytes: number;
  /** Time SIGTERM gives in-flight requests before the process exits anyway. */
  shutdownGraceMs: number;
  /** Client pool size for a real PostgreSQL (the embedded one always gets 1). */
  databasePoolSize: number;
  logLevel: "debug" | "info" | "warn" | "error" | "silent";
}

function integer(name: string, fallback: number, env: Record<string, string | undefined>): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const port = integer("PORT", 8080, env);
  const logLevel = (env.LOG_LEVEL ?? "info") as Config["logLevel"];
  if (!["debug", "info", "warn", "error", "silent"].includes(logLevel)) throw new Error(`LOG_LEVEL "${logLevel}" is not a level`);
  return {
    port,
    host: env.HOST || "0.0.0.0",
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: env.DATA_DIR || "./.data",
    providersFile: env.PROVIDERS_FILE || undefined,
    adminToken: env.ADMIN_TOKEN || undefined,
    publicUrl: (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, ""),
    credentialCacheTtlMs: integer("CREDENTIAL_CACHE_TTL_MS", 5_000, env),
    maxInferenceBodyBytes: integer("MAX_INFERENCE_BODY_BYTES", 32 * 1024 * 1024, env),
    maxManagementBodyBytes: integer("MAX_MANAGEMENT_BODY_BYTES", 256 * 1024, env),
    shutdownGraceMs: integer("SHUTDOWN_GRACE_MS", 20_000, env),
    databasePoolSize: integer("DATABASE_POOL_SIZE", 10, env),
    logLevel,
  };
}
