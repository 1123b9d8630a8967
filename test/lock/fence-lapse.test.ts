import { describe, expect, it } from "vitest";
import { PlumbError } from "../../src/errors.js";
import { createGitStop } from "../../src/git/stoppable-git.js";
import { createFence, lapsedError, lapsedWhileStopping } from "../../src/lock/fence.js";

// A lock lost only because the remote stopped answering after the controller was told to stop
// (lapsedWhileStopping) is told apart from a lock lost while leading: all of its three conditions
// are needed, and only a lapse (no renewal in time) counts, never a lock someone else took.

const stoppedUnanswered = () => {
  const stop = new AbortController();
  const gitStop = createGitStop(stop.signal);
  stop.abort();
  gitStop.unanswered = true;
  return gitStop;
};

describe("lapsedWhileStopping", () => {
  it("is true for a lapse once the controller was told to stop and the remote did not answer", () => {
    expect(lapsedWhileStopping(lapsedError("the state lock x", 20_000), stoppedUnanswered())).toBe(true);
  });

  it("is true for the lapse a fence's check throws", () => {
    let now = 0;
    let lapse: unknown;
    const fence = createFence({
      leaseMs: 3_000,
      monotonic: () => now,
      since: 0,
      what: "the lease",
      onLapse: () => undefined,
    });
    now = 2_000;
    try {
      fence.check();
    } catch (error) {
      lapse = error;
    }
    expect(lapse).toMatchObject({ code: "lock-lost" });
    expect(lapsedWhileStopping(lapse, stoppedUnanswered())).toBe(true);
  });

  it("is false without a git stop (the CLI's lock), or before the stop, or while the remote answers", () => {
    const lapse = lapsedError("the state lock x", 20_000);
    expect(lapsedWhileStopping(lapse, undefined)).toBe(false);
    const notStopped = createGitStop(new AbortController().signal);
    notStopped.unanswered = true;
    expect(lapsedWhileStopping(lapse, notStopped)).toBe(false);
    const answering = stoppedUnanswered();
    answering.unanswered = false;
    expect(lapsedWhileStopping(lapse, answering)).toBe(false);
  });

  it("is false for a lock someone else took, even lock-lost, and for what is not an Error", () => {
    const taken = new PlumbError("lock-lost", "lost the state lock x: another process took it");
    expect(lapsedWhileStopping(taken, stoppedUnanswered())).toBe(false);
    expect(lapsedWhileStopping(new Error("lost"), stoppedUnanswered())).toBe(false);
    expect(lapsedWhileStopping("lost", stoppedUnanswered())).toBe(false);
    expect(lapsedWhileStopping(undefined, stoppedUnanswered())).toBe(false);
  });
});
