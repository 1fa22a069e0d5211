import { CliError, notSignedIn } from "./cli-error";
import { configDirectory, CredentialStore, type StoredCredential } from "./credential-store";
import { sendRequest, type HttpRequest, type HttpResponse } from "./http-client";
import { managementFailure } from "./management-failure";
import { configuredServerUrl, DEFAULT_SERVER_URL } from "./server-url";
import { expiresSoon, refreshStoredCredential } from "./token-refresh";

/** `brk_<id>.<secret>`, both parts `[A-Za-z0-9_-]`. */
const API_KEY_PATTERN = /^brk_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

type Credential = { kind: "api_key"; token: string } | { kind: "oauth"; stored: StoredCredential; store: CredentialStore };

/**
 * The credential a command calls the server with: SWITCHYARD_API_KEY when set, else the
 * stored sign-in, whose access token is refreshed when it is within a minute of expiry
 * and once more if the server refuses it with 401.
 */
export class Session {
  private constructor(
    readonly server: string,
    private credential: Credential,
  ) {}

  static open(env: Record<string, string | undefined>): Session {
    const apiKey = env.SWITCHYARD_API_KEY?.trim();
    if (apiKey) {
      if (!API_KEY_PATTERN.test(apiKey)) throw new CliError("SWITCHYARD_API_KEY is not a Switchyard API key (brk_<id>.<secret>)");
      return new Session(configuredServerUrl(env) ?? DEFAULT_SERVER_URL, { kind: "api_key", token: apiKey });
    }
    const store = new CredentialStore(configDirectory(env));
    const stored = store.read();
    if (!stored) throw notSignedIn();
    const server = configuredServerUrl(env);
    if (server !== undefined && server !== stored.server) {
      throw notSignedIn(`not signed in to ${server} (the stored sign-in is for ${stored.server})`);
    }
    return new Session(stored.server, { kind: "oauth", stored, store });
  }

  get kind(): "api_key" | "oauth" {
    return this.credential.kind;
  }

  /** The stored sign-in, or undefined with SWITCHYARD_API_KEY. */
  get stored(): StoredCredential | undefined {
    return this.credential.kind === "oauth" ? this.credential.stored : undefined;
  }

  /** The id (`k_…`) of the SWITCHYARD_API_KEY in use, or undefined with a stored sign-in. */
  get apiKeyId(): string | undefined {
    return this.credential.kind === "api_key" ? `k_${this.credential.token.slice("brk_".length).split(".")[0]}` : undefined;
  }

  /** `/v1/namespaces/<nsid><suffix>`: the signed-in namespace, or `me` (the key's own) for an API key. */
  namespacePath(suffix: string): string {
    const nsid = this.credential.kind === "oauth" ? this.credential.stored.namespace_id : "me";
    return `/v1/namespaces/${encodeURIComponent(nsid)}${suffix}`;
  }

  /** Calls a management route; a 2xx answer's JSON body, or a CliError carrying the server's reason. */
  async call(method: HttpRequest["method"], path: string, json?: unknown): Promise<unknown> {
    let response = await this.send(method, path, json);
    if (response.status === 401 && this.credential.kind === "oauth") {
      // Expired early, or the clock here is off: one refresh, one retry.
      await this.refresh();
      response = await this.send(method, path, json);
    }
    if (response.status < 200 || response.status >= 300) {
      throw managementFailure(response, { kind: this.credential.kind, scopes: this.stored?.scope.split(" ").filter(Boolean) ?? [] });
    }
    if (response.body === undefined) throw new CliError(`the server answered ${method} ${path} without a JSON body`);
    return response.body;
  }

  private async send(method: HttpRequest["method"], path: string, json: unknown): Promise<HttpResponse> {
    return sendRequest(this.server, { method, path, json, bearer: await this.accessToken() });
  }

  private async accessToken(): Promise<string> {
    if (this.credential.kind === "api_key") return this.credential.token;
    if (expiresSoon(this.credential.stored)) await this.refresh();
    return this.stored!.access_token;
  }

  private async refresh(): Promise<void> {
    if (this.credential.kind !== "oauth") return;
    const stored = await refreshStoredCredential(this.credential.store, this.credential.stored.access_token);
    this.credential = { ...this.credential, stored };
  }
}
