import type { Sql } from "../db/connect-database";
import { insertAccount, insertWallet, creditWallet, MAX_WALLET_BALANCE_MICRO_USD } from "../db/queries/accounts";
import { billingBalance } from "../db/queries/billing";
import { insertNamespace } from "../db/queries/namespaces";
import { insertApiKey } from "../db/queries/api-keys";
import { isUniqueViolation } from "../db/errors";
import { ALL_SCOPES } from "../auth/scopes";
import { mintApiKeyToken, newId } from "../auth/tokens";
import { conflict, notFound } from "../errors/api-error";

/**
 * Creates an account with its wallet, a first namespace ("default") and an
 * account-wide key carrying every scope — all or nothing.
 */
export async function createAccount(sql: Sql, email: string, creditMicroUsd: number) {
  const minted = mintApiKeyToken();
  try {
    return await sql.begin(async (transaction) => {
      const tx = transaction as unknown as Sql;
      const account = await insertAccount(tx, newId("acct"), email);
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

export async function addCredits(sql: Sql, accountId: string, amountMicroUsd: number) {
  const balance = await creditWallet(sql, accountId, amountMicroUsd);
  if (balance !== undefined) return { balance_micro_usd: balance };
  if (!(await billingBalance(sql, accountId))) throw notFound("account");
  throw conflict(`the balance would pass ${MAX_WALLET_BALANCE_MICRO_USD} micro-USD`);
}
