import type { Config } from "./config";
import type { Database } from "./db/connect-database";
import type { CredentialResolver } from "./auth/credential-resolver";
import type { LastUsedTracker } from "./auth/last-used-tracker";
import type { Metrics } from "./observability/metrics";

/** The long-lived parts a route needs; built once in main.ts (or a test) and passed down. */
export interface Services {
  config: Config;
  db: Database;
  credentials: CredentialResolver;
  lastUsed: LastUsedTracker;
  metrics: Metrics;
}
