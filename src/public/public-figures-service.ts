import { pingDatabase } from "../db/queries/health";
import { platformUsageByDayAndModel, providerRequestWindow, type ProviderWindowRow, type UsageDayModelRow } from "../db/queries/stats";
import type { Services } from "../services";
import { OneAtATime } from "./one-at-a-time";

/**
 * What the public routes read from the database: the health check's ping, the platform
 * usage statistics and the discovery routes' request window. No tenant: these figures are
 * the platform's, never one account's. The figures come from the read pool: anonymous
 * callers never take a connection admission needs.
 */
export type PublicFiguresDeps = Pick<Services, "db">;

/** True when the database answers. */
export async function databaseAnswers(deps: PublicFiguresDeps): Promise<boolean> {
  try {
    await pingDatabase(deps.db.sql);
    return true;
  } catch {
    return false;
  }
}

/** One queue of public computations per database (per running app). */
const queues = new WeakMap<object, OneAtATime>();

function publicQueue(deps: PublicFiguresDeps): OneAtATime {
  let queue = queues.get(deps.db);
  if (queue === undefined) {
    queue = new OneAtATime();
    queues.set(deps.db, queue);
  }
  return queue;
}

/** Succeeded requests created in [from, to), grouped by UTC day and model. */
export function platformUsage(deps: PublicFiguresDeps, from: Date, to: Date): Promise<UsageDayModelRow[]> {
  return publicQueue(deps).run(() => platformUsageByDayAndModel(deps.db.read, from, to));
}

/** Per provider: requests since `minuteStart`, and cache-read / prompt tokens of succeeded requests since `windowStart`. */
export function providerWindow(deps: PublicFiguresDeps, windowStart: Date, minuteStart: Date): Promise<ProviderWindowRow[]> {
  return publicQueue(deps).run(() => providerRequestWindow(deps.db.read, windowStart, minuteStart));
}
