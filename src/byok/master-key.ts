import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "@noble/hashes/utils.js";
import { log } from "../observability/log";

const MASTER_KEY_BYTES = 32;
export const MASTER_KEY_FILE = "byok-master-key";

/** The 32 bytes of a master key given as standard base64; `source` names it in the error. */
export function decodeMasterKey(base64: string, source: string): Uint8Array {
  const text = base64.trim();
  // 32 bytes are 43 base64 characters and one "=" of padding.
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) throw new Error(`${source} must be the standard base64 of exactly ${MASTER_KEY_BYTES} bytes`);
  return Uint8Array.from(Buffer.from(text, "base64"));
}

/**
 * The key that wraps every KEK private key: BYOK_MASTER_KEY when set, otherwise the one in
 * DATA_DIR, generated there (mode 0600) on first need with a warning. Instances sharing a
 * database must share this key, so production sets the variable.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): Uint8Array {
  if (configured !== undefined) return decodeMasterKey(configured, "BYOK_MASTER_KEY");
  const path = join(dataDir, MASTER_KEY_FILE);
  if (existsSync(path)) return decodeMasterKey(readFileSync(path, "utf8"), path);
  mkdirSync(dataDir, { recursive: true });
  // Written whole to a private temporary file, then linked into place: link refuses an
  // existing name, so of two processes starting at once one key wins and the other reads
  // it complete.
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(temporary, Buffer.from(randomBytes(MASTER_KEY_BYTES)).toString("base64") + "\n", { flag: "wx", mode: 0o600 });
  chmodSync(temporary, 0o600); // whatever the umask
  try {
    linkSync(temporary, path);
    log.warn("BYOK_MASTER_KEY is not set: generated one into DATA_DIR; set the variable on every instance in production", { file: path });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  } finally {
    unlinkSync(temporary);
  }
  return decodeMasterKey(readFileSync(path, "utf8"), path);
}
