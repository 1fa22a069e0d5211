import type { Command } from "../command";
import { formatFields, formatMicroUsd } from "../format-table";
import { print, printJson } from "../output";
import { Session } from "../session";

interface Balance {
  balance_micro_usd: number;
  pending_debits_micro_usd: number;
  available_micro_usd: number;
  currency?: string;
}

export const balanceCommand: Command = {
  path: ["balance"],
  summary: "the account's wallet: balance, what requests in flight hold, what is available",
  synopsis: "",
  arguments: [],
  options: [],
  async run(context) {
    const session = Session.open(context.env);
    const body = await session.call("GET", "/v1/billing/balance");
    if (context.json) return printJson(context, body);
    const wallet = body as Balance;
    print(
      context,
      formatFields([
        ["balance", formatMicroUsd(wallet.balance_micro_usd)],
        ["held in flight", formatMicroUsd(wallet.pending_debits_micro_usd)],
        ["available", formatMicroUsd(wallet.available_micro_usd)],
      ]),
    );
  },
};
