import { chmodSync, lstatSync, mkdirSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";

/**
 * Makes DATA_DIR private to the gateway's user: the folder and every folder under it 0700,
 * every file 0600, including what an earlier version or a looser umask left behind. Symbolic
 * links inside are left alone (chmod would follow them out of the folder); DATA_DIR itself
 * may be one, and the folder it names is made private. New files are covered by
 * the umask the embedded start sets and, whatever they are created with, by the 0700 folders
 * no other user can enter.
 */
export function makeDataDirPrivate(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  restrict(realpathSync(dataDir));
}

function restrict(path: string): void {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o700) chmodSync(path, 0o700);
    for (const name of readdirSync(path)) restrict(join(path, name));
  } else if (stat.isFile() && (stat.mode & 0o077) !== 0) {
    chmodSync(path, stat.mode & 0o600);
  }
}
