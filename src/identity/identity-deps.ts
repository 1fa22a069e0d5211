import type { Database } from "../db/connect-database";
import type { CredentialResolver } from "./credential-resolver";
import type { MeNamespace } from "./me-namespace";

/**
 * The long-lived parts identity's functions use. `Services` holds each under the same
 * name, so a route or a console page passes the `services` it has, and a test just these.
 */
export interface IdentityDeps {
  db: Database;
  /** The credential cache; `revokeCredential` and `forgetCredentials` are the only code that drops from it. */
  credentials: CredentialResolver;
  /** The one answer to "which namespace is `me`". */
  me: MeNamespace;
}
