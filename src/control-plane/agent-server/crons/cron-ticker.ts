import type { Clock } from "../../../clock.js";
import { nextRun, type CronRecord, type CronStore } from "./cron-store.js";

/**
 * Fires each enabled cron at its next tick on the injected clock, then arms it again. `fire`
 * creates the cron's run; a tick missed while the server was down is not caught up.
 */
export type CronTicker = {
  /** (Re)arms a cron after it was created, changed or restored; disarms a deleted one. */
  arm(deploymentId: string, cron: CronRecord): void;
  disarm(cronId: string): void;
  armAll(): void;
  stop(): void;
};

export function createCronTicker(
  clock: Clock,
  crons: CronStore,
  fire: (deploymentId: string, cron: CronRecord) => Promise<void>,
): CronTicker {
  const timers = new Map<string, AbortController>();
  const disarm = (cronId: string) => {
    timers.get(cronId)?.abort(new Error("disarmed"));
    timers.delete(cronId);
  };
  const arm = (deploymentId: string, cron: CronRecord) => {
    disarm(cron.cron_id);
    cron.next_run_date = nextRun(cron, clock.now());
    if (cron.next_run_date === null) return;
    const controller = new AbortController();
    timers.set(cron.cron_id, controller);
    clock.sleep(Date.parse(cron.next_run_date) - clock.now(), controller.signal).then(
      async () => {
        if (timers.get(cron.cron_id) !== controller) return;
        timers.delete(cron.cron_id);
        // Still there and unchanged: a cron deleted or patched meanwhile was disarmed.
        if (crons.get(deploymentId, cron.cron_id) !== cron) return;
        await fire(deploymentId, cron).catch(() => undefined);
        arm(deploymentId, cron);
      },
      () => undefined,
    );
  };
  return {
    arm,
    disarm,
    armAll: () => {
      for (const [deploymentId, cron] of crons.all()) arm(deploymentId, cron);
    },
    stop() {
      for (const controller of timers.values()) controller.abort(new Error("stopped"));
      timers.clear();
    },
  };
}
