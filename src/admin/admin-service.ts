import type { Sql } from "../db/connect-database";
import { insertAccount, insertWallet, creditWallet, setAccountPassword, MAX_WALLET_BALANCE_MICRO_USD } from "../db/queries/accounts";
import { billingBalance } from "../db/queries/billing";
import { insertNamespace } from "../db/queries/namespaces";
import { insertApiKey } from "../db/queries/api-keys";
import { isUniqueViolation } from "../db/errors";
import { ALL_SCOPES } from "../auth/scopes";
import { mintApiKeyToken } from "../auth/tokens";
import { newId } from "../ids";
import { badRequest, conflict, notFound } from "../errors/api-error";
import { hashPassword, passwordProblem } from "../auth/passwords";
import type { Services } from "../services";

/** What the operator API's service uses: the database. */
export type AdminServiceDeps = Pick<Services, "db">;

/** A password's argon2id hash, or a 400 naming the field when its length is refused. */
async function passwordHashOf(password: string): Promise<string> {
  const problem = passwordProblem(password);
  if (problem) throw badRequest(problem);
  return hashPassword(password);
}

/**
 * Creates an account with its wallet, a first namespace ("default") and an
 * account-wide key carrying every scope — all or nothing. With a password the account
 * can also sign in to the console.
 */
export async function createAccount(deps: AdminServiceDeps, email: string, creditMicroUsd: number, password?: string) {
  const minted = mintApiKeyToken();
  const passwordHash = password === undefined ? null : await passwordHashOf(password);
  try {
    return await deps.db.sql.begin(async (transaction) => {
      const tx = transaction as unknown as Sql;
      const account = await insertAccount(tx, newId("acct"), email, passwordHash);
      await insertWallet(tx, account.id, 0);
      const namespace = await insertNamespace(tx, newId("ns"), account.id, "default");
      await insertApiKey(tx, {
        id: minted.keyId,
        accountId: account.id,
        namespaceId: null,
        displayName: "operator-issued",
        keyPrefix: minted.keyPrefix,
        tokenHash: minted.tokenHash,
        scopes: [...ALL_SCOPES],
        expiresAt: null,
      });
      if (creditMicroUsd > 0) await creditWallet(tx, account.id, creditMicroUsd);
      return { account_id: account.id, namespace_id: namespace.id, api_key: minted.token };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict("an account with this email already exists");
    throw error;
  }
}

export async function addCredits(deps: AdminServiceDeps, accountId: string, amountMicroUsd: number) {
  const balance = await creditWallet(deps.db.sql, accountId, amountMicroUsd);
  if (balance !== undefined) return { balance_micro_usd: balance };
  if (!(await billingBalance(deps.db.sql, accountId))) throw notFound("account");
  throw conflict(`the balance would pass ${MAX_WALLET_BALANCE_MICRO_USD} micro-USD`);
}

/** Sets or replaces a live account's console password. */
export async function setPassword(deps: AdminServiceDeps, accountId: string, password: string) {
  const passwordHash = await passwordHashOf(password);
  if (!(await setAccountPassword(deps.db.sql, accountId, passwordHash))) throw notFound("account");
  return { updated: true };
}
