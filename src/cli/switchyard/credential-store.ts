import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { randomBytes } from "node:crypto";
import { CliError, notSignedIn } from "./cli-error";

/** What `switchyard login` stores: the token response plus where it came from. */
export interface StoredCredential {
  access_token: string;
  refresh_token: string;
  /** RFC 3339: when the access token expires. */
  expires_at: string;
  /** Space-separated, as the token endpoint granted them. */
  scope: string;
  namespace_id: string;
  account_id: string;
  /** The server it was issued by, as SWITCHYARD_URL named it at login. */
  server: string;
}

const FIELDS = ["access_token", "refresh_token", "expires_at", "scope", "namespace_id", "account_id", "server"] as const;
const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

/** `$XDG_CONFIG_HOME/switchyard`, else `~/.config/switchyard` (XDG: a relative XDG_CONFIG_HOME is ignored). */
export function configDirectory(env: Record<string, string | undefined>): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "switchyard");
  return join(env.HOME || homedir(), ".config", "switchyard");
}

/**
 * The credential file, readable by its owner only (folder 0700, file 0600). Writes go
 * to a temporary 0600 file that is renamed over the old one, so a reader never sees half
 * a file and a crash never leaves the token world-readable.
 */
export class CredentialStore {
  readonly path: string;
  private readonly lockPath: string;

  constructor(readonly directory: string) {
    this.path = join(directory, "credentials.json");
    this.lockPath = join(directory, "credentials.lock");
  }

  read(): StoredCredential | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new CliError(`cannot read ${this.path}: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw notSignedIn(`the stored credential at ${this.path} is damaged`);
    }
    const record = parsed as Record<string, unknown>;
    if (typeof parsed !== "object" || parsed === null || FIELDS.some((field) => typeof record[field] !== "string")) {
      throw notSignedIn(`the stored credential at ${this.path} is incomplete`);
    }
    return Object.fromEntries(FIELDS.map((field) => [field, record[field]])) as unknown as StoredCredential;
  }

  write(credential: StoredCredential): void {
    this.ensureDirectory();
    const temporary = join(this.directory, `.credentials.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
    const fd = openSync(temporary, "wx", 0o600);
    try {
      writeSync(fd, `${JSON.stringify(credential, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      chmodSync(temporary, 0o600); // the process umask cannot widen it, but be explicit
      renameSync(temporary, this.path);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
  }

  remove(): void {
    rmSync(this.path, { force: true });
  }

  /**
   * Runs `work` holding an exclusive lock on the credential, so two commands refreshing
   * at once do not both present the same refresh token: the server rotates it on use and
   * treats the second presentation as a stolen token, revoking the whole grant.
   */
  async withLock<T>(work: () => Promise<T>): Promise<T> {
    this.ensureDirectory();
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        closeSync(openSync(this.lockPath, "wx", 0o600));
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (this.lockAgeMs() > LOCK_STALE_MS) {
          rmSync(this.lockPath, { force: true }); // left behind by a command that was killed
          continue;
        }
        if (Date.now() > deadline) throw new CliError(`another switchyard command holds ${this.lockPath}; if none is running, delete that file`);
        await Bun.sleep(50);
      }
    }
    try {
      return await work();
    } finally {
      try {
        unlinkSync(this.lockPath);
      } catch {
        // already gone: nothing to release
      }
    }
  }

  private lockAgeMs(): number {
    try {
      return Date.now() - statSync(this.lockPath).mtimeMs;
    } catch {
      return 0;
    }
  }

  private ensureDirectory(): void {
    mkdirSync(this.directory, { recursive: true, mode: 0o700 });
    // mkdir's mode is filtered by the umask, and the folder may predate us.
    if ((statSync(this.directory).mode & 0o777) !== 0o700) chmodSync(this.directory, 0o700);
  }
}
