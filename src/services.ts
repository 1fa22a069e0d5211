import type { Config } from "./config";
import type { Database } from "./db/connect-database";
import type { CredentialResolver } from "./identity/credential-resolver";
import type { LastUsedTracker } from "./identity/last-used-tracker";
import type { Metrics } from "./observability/metrics";
import type { Catalog } from "./providers/catalog";
import type { EndpointStats } from "./routing/endpoint-stats";
import type { Translator } from "./translation/translator";
import type { ConnectCheck } from "./routing/connect-check";
import type { MeteringSink } from "./metering/metering-rows";
import type { MeNamespace } from "./identity/me-namespace";
import type { ShardedWriteBuffer } from "./db/batch/sharded-write-buffer";
import type { WalletLeases } from "./admission/wallet-leases";
import type { PendingSettlements } from "./metering/pending-settlements";
import type { PolicyStore } from "./policy/policy-store";
import type { RoutingPresetStore } from "./routing/routing-preset-store";
import type { InFlightRequests } from "./pipeline/in-flight-requests";
import type { FundingSource } from "./funding/funding-source";
import type { AdmissionChain } from "./admission/admission-chain";
import type { KekStore } from "./byok/kek-store";
import type { ByokKeyStore } from "./byok/byok-key-store";
import type { AuthThrottle } from "./identity/auth-throttle";
import type { EgressGuard } from "./egress/egress-guard";
import type { RequestTracing } from "./observability/request-trace";
import type { Readiness } from "./observability/readiness";
import type { AccountReadGate } from "./http/account-read-gate";
import type { RefusalSampler } from "./metering/refusal-sampler";
import type { AnswerBytes } from "./routing/answer-bytes";

/** The long-lived parts a route needs; built once in server.ts (or a test) and passed down. */
export interface Services {
  config: Config;
  db: Database;
  /** What GET /ready answers: the database answers with every migration applied, and no SIGTERM yet. */
  readiness: Readiness;
  credentials: CredentialResolver;
  lastUsed: LastUsedTracker;
  metrics: Metrics;
  catalog: Catalog;
  endpointStats: EndpointStats;
  translator: Translator;
  connectCheck: ConnectCheck;
  writeBuffer: ShardedWriteBuffer;
  meteringSink: MeteringSink;
  /** The one answer to "which namespace is `me`" (identity/me-namespace.ts), cached for the request path. */
  me: MeNamespace;
  walletLeases: WalletLeases;
  pendingSettlements: PendingSettlements;
  /** Each account's room for large whole upstream answers in flight (UPSTREAM_ANSWER_BYTES_PER_ACCOUNT): one for both inference routers. */
  answerBytes: AnswerBytes;
  /** Which requests refused before admission get a record; the rest are counted per account and day (REFUSED_RECORDS_PER_MINUTE). */
  refusals: RefusalSampler;
  /** Policies bound to principals, cached; the policy routes invalidate it on every change. */
  policies: PolicyStore;
  /** Routing presets by namespace and name, cached; the routing-preset routes invalidate it on every change. */
  routingPresets: RoutingPresetStore;
  /** Chooses the upstream credential for each endpoint (today the platform's keys). */
  funding: FundingSource;
  /** What every inference request must pass before its first upstream call: guardrails, budgets and rate limits when a policy applies, then the wallet (when metering is on). */
  admission: AdmissionChain;
  /** What is still being served, ended cleanly at the shutdown grace limit. */
  inFlight: InFlightRequests;
  /** BYOK key-encryption keys, shared by every instance through the database. */
  keks: KekStore;
  /** Accounts' decrypted BYOK keys for the request path, cached briefly. */
  byokKeys: ByokKeyStore;
  /** Failed sign-in and user-code counters, shared by every instance through the database. */
  throttle: AuthThrottle;
  /** The gate for every outbound call a customer can steer (BYOK `api_base`): checked when stored and before each connection. */
  egress: EgressGuard;
  /** Expensive management reads in flight per account on this process, capped (its share of ACCOUNT_CONCURRENT_READS). */
  accountReads: AccountReadGate;
  /** Request traces: TRACING_OFF unless main.ts started them from the OTEL_* variables. */
  tracing: RequestTracing;
}
