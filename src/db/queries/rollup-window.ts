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
export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;

export function splitAtWhole(from: Date, to: Date, unitMs: number): RollupSplit {
  const ceilFrom = Math.ceil(from.getTime() / unitMs) * unitMs;
  const floorTo = Math.floor(to.getTime() / unitMs) * unitMs;
  if (ceilFrom < floorTo) return { wholeFrom: new Date(ceilFrom), wholeTo: new Date(floorTo) };
  return { wholeFrom: to, wholeTo: to };
}

/**
 * A read over [from, to) by days and hours (migration 0035): whole days in [days.wholeFrom,
 * days.wholeTo), whole hours in [hours.wholeFrom, days.wholeFrom) and [days.wholeTo,
 * hours.wholeTo), records in [from, hours.wholeFrom) and [hours.wholeTo, to), at most an
 * hour at each edge. The days are cut inside the whole hours, so the five ranges never
 * overlap and cover the window; without a whole hour, all of it comes from the records.
 */
export function splitAtWholeDaysAndHours(from: Date, to: Date): { days: RollupSplit; hours: RollupSplit } {
  const hours = splitAtWhole(from, to, HOUR_MS);
  return { days: splitAtWhole(hours.wholeFrom, hours.wholeTo, DAY_MS), hours };
}
