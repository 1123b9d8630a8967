import { Cron } from "croner";
import { isRecord, readPerDeployment } from "../threads/snapshot-read.js";

/**
 * Crons of each deployment (docs/control-plane.md "Crons"): a schedule (cron syntax, UTC) and
 * the body of the run to create at each tick, on a thread or stateless. Kept with --data.
 */

export type CronRecord = {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  schedule: string;
  /** The run body created at each tick (assistant_id, input, config, ...). */
  payload: Record<string, unknown>;
  metadata: Record<string, unknown>;
  end_time: string | null;
  enabled: boolean;
  on_run_completed: "delete" | "keep";
  user_id: null;
  created_at: string;
  updated_at: string;
  next_run_date: string | null;
};

/** The next tick after `now` (UTC), or null: none before end_time, or disabled. */
export function nextRun(cron: CronRecord, now: number): string | null {
  if (!cron.enabled) return null;
  const next = new Cron(cron.schedule, { timezone: "UTC", paused: true }).nextRun(new Date(now));
  if (next === null) return null;
  if (cron.end_time !== null && next.getTime() > Date.parse(cron.end_time)) return null;
  return next.toISOString();
}

/** Why a schedule is refused, or undefined. */
export function scheduleProblem(schedule: unknown): string | undefined {
  if (typeof schedule !== "string") return "Input should be a cron schedule string";
  try {
    new Cron(schedule, { timezone: "UTC", paused: true });
    return undefined;
  } catch (error) {
    return `Input should be a cron schedule (${(error as Error).message})`;
  }
}

export type CronStore = {
  get(deploymentId: string, cronId: string): CronRecord | undefined;
  put(deploymentId: string, cron: CronRecord): void;
  delete(deploymentId: string, cronId: string): void;
  list(deploymentId: string): CronRecord[];
  all(): Array<[string, CronRecord]>;
  snapshot(): Record<string, CronRecord[]>;
  restore(data: Record<string, CronRecord[]>): void;
};

export function createCronStore(): CronStore {
  let byDeployment = new Map<string, Map<string, CronRecord>>();
  return {
    get: (deploymentId, cronId) => byDeployment.get(deploymentId)?.get(cronId),
    put(deploymentId, cron) {
      const crons = byDeployment.get(deploymentId) ?? new Map<string, CronRecord>();
      byDeployment.set(deploymentId, crons.set(cron.cron_id, cron));
    },
    delete: (deploymentId, cronId) => void byDeployment.get(deploymentId)?.delete(cronId),
    list: (deploymentId) => [...(byDeployment.get(deploymentId)?.values() ?? [])],
    all: () =>
      [...byDeployment].flatMap(([id, crons]) =>
        [...crons.values()].map((c) => [id, c] as [string, CronRecord]),
      ),
    snapshot: () =>
      JSON.parse(
        JSON.stringify(Object.fromEntries([...byDeployment].map(([id, crons]) => [id, [...crons.values()]]))),
      ) as Record<string, CronRecord[]>,
    restore(data) {
      byDeployment = new Map(
        Object.entries(data).map(([id, list]) => [id, new Map(list.map((cron) => [cron.cron_id, cron]))]),
      );
    },
  };
}

/** The crons of a snapshot (absent in snapshots written before crons existed). */
export function readCrons(data: unknown): Record<string, CronRecord[]> {
  return readPerDeployment<CronRecord>(
    data,
    "crons",
    "crons",
    (c) => isRecord(c) && typeof c.cron_id === "string" && scheduleProblem(c.schedule) === undefined,
  );
}
