import type { WalletLeases } from "./wallet-leases";
import { NOTHING_HELD, refusal, type AdmissionCheck, type AdmissionRequest, type Grant, type Refusal } from "./admission-check";

/**
 * The account's wallet: the request's cost ceiling is reserved against a wallet lease
 * (wallet-leases.ts), so concurrent requests on any number of instances never
 * spend more than the balance. The settled charge leaves the lease and the rest of the
 * reservation goes back to it. A request funded only by the account's own provider keys
 * (BYOK) is never charged: it needs no funds and holds nothing.
 */
export class WalletCheck implements AdmissionCheck {
  readonly name = "wallet";

  constructor(private readonly leases: WalletLeases) {}

  async admit(request: AdmissionRequest): Promise<Grant | Refusal> {
    if (request.funding === "byok") return NOTHING_HELD;
    const accountId = request.principal.accountId;
    const reservation = request.costCeilingMicroUsd;
    const leaseId = await this.leases.admit(accountId, reservation);
    if (leaseId === undefined) {
      // The ceiling tells the client what it would take: a smaller max tokens or prompt may fit.
      return refusal("payment_required", `insufficient balance for this request, which can cost up to ${reservation} micro-USD: add credit to the account`);
    }
    // Settlement caps the charge at what was reserved and debits it against this lease.
    request.record.leaseId = leaseId;
    request.record.reservedMicroUsd = reservation;
    let ended: Promise<void> | undefined;
    // Resolves when what the request leaves unspent is available again (a low balance's give-back).
    const end = (charge: number | null) => (ended ??= this.leases.settle(accountId, leaseId, reservation, charge));
    return { kind: "grant", settle: ({ chargeMicroUsd }) => end(chargeMicroUsd), release: () => end(0) };
  }
}
