import { describe, expect, it } from "vitest";
import { stopController } from "../../src/controller/shutdown.js";
import { PlumbError } from "../../src/errors.js";
import { createGitStop } from "../../src/git/stoppable-git.js";
import { lapsedError } from "../../src/lock/fence.js";
import { memoryLogger } from "./support.js";

// The stop's last line says what became of the status and the state lock. Told to stop (SIGTERM)
// with a status branch whose remote no longer answers, the lease's renewal in flight ran out 3 s
// after the stop, so the lease lapsed on the controller's own clock: it said "stopped after losing
// the state lock; nothing more recorded", alarming and wrong (it stopped as asked; no one took the
// lock; the lease runs out on the remote). A lock lost while leading, or taken by another writer
// during the stop, is still said as a lock lost.

const LAPSE = () => lapsedError("the lease of status branch plumb-status", 2_000);
const TAKEN = () =>
  new PlumbError("lock-lost", "lost the lease of status branch plumb-status: another writer took it");

/** stopController with parts that do nothing but `during` (run as the status is flushed: the stop's pushes). */
async function stop(options: {
  lostBefore?: Error;
  lostDuring?: Error;
  unanswered?: boolean;
  leased?: boolean;
}) {
  const { logger, lines } = memoryLogger();
  const stopping = new AbortController();
  const lost = new AbortController();
  const gitStop = createGitStop(stopping.signal, 3_000);
  if (options.lostBefore) lost.abort(options.lostBefore);
  stopping.abort(); // SIGTERM
  await stopController({
    graceMs: 0,
    log: logger,
    triggers: { stop: async () => undefined },
    scanner: { settled: async () => undefined },
    queue: { stop: async () => true },
    book: {
      statuses: new Map(),
      flush: async () => {
        // The stop's publish waited for the renewal in flight, which ran out (GitStop) or lost the CAS.
        if (options.unanswered) gitStop.unanswered = true;
        if (options.lostDuring) lost.abort(options.lostDuring);
      },
    },
    lock: { lost: lost.signal, release: async () => undefined },
    leased: options.leased ?? true,
    gitStop,
    http: undefined,
    source: { close: async () => undefined },
  });
  return lines().at(-1)!;
}

describe("the controller's last line at a stop", () => {
  it("the remote did not answer after the stop and the lease lapsed: stopped as asked, the lease runs out, not a lock lost", async () => {
    const last = await stop({ unanswered: true, lostDuring: LAPSE() });
    expect(last.level).toBe(40);
    expect(last.msg).toBe(
      "stopped as asked; the git remote did not answer within 3 s of the stop, so the status branch's lease could not be renewed or released: it runs out after its duration (then a standby takes over), and the last status is in the status directory, not on the status branch (nothing is recorded once the lease ran out)",
    );
    expect(String(last.msg)).not.toContain("losing the state lock");
  });

  it("the remote did not answer after the stop, the lease still good: status saved, the lease not released", async () => {
    const last = await stop({ unanswered: true });
    expect(last.level).toBe(40);
    expect(last.msg).toBe(
      "stopped; status saved; the git remote did not answer within 3 s of the stop, so the status branch's lease was not released: it runs out after its duration (then a standby takes over)",
    );
  });

  it("a lock lost while leading (before the stop) is said as one", async () => {
    const last = await stop({ lostBefore: LAPSE(), unanswered: true });
    expect(last.msg).toBe("stopped after losing the state lock; nothing more recorded");
  });

  it("a lease another writer took during the stop is said as a lock lost, the remote answering or not", async () => {
    expect((await stop({ lostDuring: TAKEN(), unanswered: true })).msg).toBe(
      "stopped after losing the state lock; nothing more recorded",
    );
    expect((await stop({ lostDuring: TAKEN() })).msg).toBe(
      "stopped after losing the state lock; nothing more recorded",
    );
  });

  it("a lapse during the stop with the remote answering (renewals failing, a paused process) is said as a lock lost", async () => {
    const last = await stop({ lostDuring: LAPSE() });
    expect(last.msg).toBe("stopped after losing the state lock; nothing more recorded");
  });

  it("all well, or no lease (no status branch): stopped; status saved", async () => {
    for (const options of [{}, { leased: false, unanswered: true }]) {
      const last = await stop(options);
      expect(last.level).toBe(30);
      expect(last.msg).toBe("stopped; status saved");
    }
  });
});
