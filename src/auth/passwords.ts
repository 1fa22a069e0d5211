import { randomBytes } from "node:crypto";

/** Password length bounds, in characters: long enough to resist guessing, short enough that hashing stays bounded. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

/** Why a password is refused, or undefined when its length is acceptable. */
export function passwordProblem(password: string): string | undefined {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return undefined;
}

/** An argon2id PHC string (Bun's built-in implementation, its default cost). Only this is stored. */
export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

let dummyHash: Promise<string> | undefined;

/**
 * A hash of a random password nobody knows, made once per process with the same
 * algorithm and cost as real ones: verifying against it takes as long as verifying a
 * real password, so a sign-in for an unknown email (or an account without a password)
 * costs the same time as a wrong password and does not reveal which it was.
 */
function dummy(): Promise<string> {
  return (dummyHash ??= hashPassword(randomBytes(32).toString("base64url")));
}

/**
 * Checks a password against a stored hash; with no hash (no such account, or no
 * password set) it verifies against the dummy hash and answers false, in the same time.
 */
export async function verifyPassword(password: string, storedHash: string | null | undefined): Promise<boolean> {
  if (!storedHash) {
    await Bun.password.verify(password, await dummy()).catch(() => false);
    return false;
  }
  try {
    return await Bun.password.verify(password, storedHash);
  } catch {
    // A hash Bun cannot read is a password that cannot match, never a 500.
    return false;
  }
}
