/**
 * How a read over [from, to) splits between the usage rollups (migration 0034), which hold
 * whole UTC days (or minutes), and the request records, read only for the partial day at
 * each edge: whole units in [wholeFrom, wholeTo), records in [from, wholeFrom) and
 * [wholeTo, to). A window inside one unit has no whole unit (wholeFrom = wholeTo = to):
 * all of it comes from the records. The answers are those of the records alone, whatever
 * the window; the records read are at most one unit at each edge.
 */
export interface RollupSplit {
  wholeFrom: Date;
  wholeTo: Date;
}

export const DAY_MS = 86_400_000;
export const MINUTE_MS = 60_000;

export function splitAtWhole(from: Date, to: Date, unitMs: number): RollupSplit {
  const ceilFrom = Math.ceil(from.getTime() / unitMs) * unitMs;
  const floorTo = Math.floor(to.getTime() / unitMs) * unitMs;
  if (ceilFrom < floorTo) return { wholeFrom: new Date(ceilFrom), wholeTo: new Date(floorTo) };
  return { wholeFrom: to, wholeTo: to };
}
