import { createSync } from "../../source/triggers.js";
import { type Context, leadersOf } from "./controller-context.js";
import { follow } from "./follow-roster.js";

/** The shared triggers' work: follow git's environments, then scan (or check) each one led here. */
export function createScans(ctx: Context) {
  const { log, source } = ctx;
  const scanAll = async (trigger: string) => {
    if (ctx.stopping) return;
    const generation = ctx.tree.next();
    try {
      // A read that fails is each store's to report (its scan shares the same failed read).
      const tree = await ctx.tree.shared(source.manifestRoot).catch(() => undefined);
      // A store restarting for new settings does not scan this change: its next store does, with them.
      // An older read finishing after a newer one is not followed: it would undo the newer roster.
      const restarting = tree && !ctx.stopping && ctx.tree.follows(generation) ? follow(ctx, tree) : [];
      for (const c of ctx.claims) if (c.role() === "starting") ctx.rescanOnceStarted.add(c.name);
      const scanning = leadersOf(ctx.claims).filter((c) => !restarting.includes(c.name));
      await Promise.all(scanning.map((c) => c.store()!.scan(trigger)));
    } finally {
      ctx.tree.release();
    }
  };
  const scanned = (trigger: string, result: "ok" | "invalid" | "error") =>
    leadersOf(ctx.claims).forEach((c) => c.store()!.scanned(trigger, result));
  const newCommit = async () =>
    void (await Promise.all(leadersOf(ctx.claims).map((c) => c.store()!.checkTracked())));
  const sync = createSync({
    ...{ source, scan: scanAll, metrics: { scanned }, log, newCommit },
    stopping: () => ctx.stopping,
  });
  const checkDrift = async () =>
    void (await Promise.all(leadersOf(ctx.claims).map((c) => c.store()!.checkDrift())));
  return { scanAll, scanned, sync, checkDrift };
}
