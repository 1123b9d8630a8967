import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { displacedRecords } from "../../src/controller/displaced-records.js";
import { openStatusBook, sameRecord } from "../../src/controller/status-book.js";
import { PlumbError } from "../../src/errors.js";
import { createGitStop, GitStopped } from "../../src/git/stoppable-git.js";
import { lapsedError } from "../../src/lock/fence.js";
import { statusFileName } from "../../src/status/status-types.js";
import { status } from "./fixtures.js";
import { manualTimers } from "./manual-timers.js";
import { memoryLogger } from "./support.js";

// The controller's status book writes a record only when it says something new: an in-sync
// reconcile (the same record, a later updated_at) writes no file and keeps the record it had.

async function book() {
  const statusDir = join(await mkdtemp(join(tmpdir(), "plumb-book-")), "status");
  const changed: string[] = [];
  const opened = await openStatusBook({
    location: { root: statusDir, statusDir },
    timers: manualTimers(),
    log: memoryLogger().logger,
    onChange: (key) => changed.push(key),
  });
  const file = join(statusDir, statusFileName("Deployment", "a"));
  const onDisk = async () => JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  return { book: opened, changed, onDisk };
}

describe("status book", () => {
  it("keeps a record whose only change is its time: no file written, no change announced", async () => {
    const { book: statuses, changed, onDisk } = await book();
    const first = status("a", { updated_at: "2026-11-26T03:00:00.000Z" });
    await statuses.record(first);
    await statuses.record(status("a", { updated_at: "2026-11-26T04:00:00.000Z" }));
    expect(await onDisk()).toMatchObject({ updated_at: "2026-11-26T03:00:00.000Z", seq: 1 });
    expect(statuses.statuses.get("Deployment/a")).toBe(first);
    expect(changed).toEqual(["Deployment/a"]);
  });

  it("writes a record that changed, with its new time", async () => {
    const { book: statuses, changed, onDisk } = await book();
    await statuses.record(status("a", { updated_at: "2026-11-26T03:00:00.000Z" }));
    await statuses.record(status("a", { sync: "OutOfSync", updated_at: "2026-11-26T04:00:00.000Z" }));
    expect(await onDisk()).toMatchObject({
      sync: "OutOfSync",
      updated_at: "2026-11-26T04:00:00.000Z",
      seq: 2,
    });
    expect(changed).toEqual(["Deployment/a", "Deployment/a"]);
  });

  it("compares records without their time and write count, and with every other field", () => {
    const kept = { ...status("a"), seq: 4 };
    expect(sameRecord(kept, status("a", { updated_at: "2026-11-26T05:00:00.000Z" }))).toBe(true);
    expect(sameRecord(kept, status("a", { last_error: "boom" }))).toBe(false);
    expect(sameRecord(kept, status("a", { applied_spec: { image: "x" } }))).toBe(false);
  });
});

// Told to stop, with a status branch whose remote no longer answers, the last publish cannot land:
// its lease lapses on the controller's own clock (no one took the lock) or its push runs out. That is
// a warning saying where the last status is, not an error quoting the lapse ("another writer may
// hold it now"); a lock another writer took, or a lapse with the remote answering, is said as before.
describe("status book: the last publish at the stop", () => {
  const LAPSE = () => lapsedError("the lease of status branch plumb-status", 2_000);
  const TAKEN = () =>
    new PlumbError("lock-lost", "lost the lease of status branch plumb-status: another writer took it");

  /** A book on a status branch (a repository without a remote), stopped; `unanswered` as told. */
  async function stoppedBook(failing: { fence?: () => unknown; push?: () => unknown }, unanswered: boolean) {
    const root = await mkdtemp(join(tmpdir(), "plumb-book-stop-"));
    execFileSync("git", ["init", "-q", "--initial-branch=main", root]);
    const stop = new AbortController();
    const gitStop = createGitStop(stop.signal, 3_000);
    const log = memoryLogger();
    const fail = (make?: () => unknown) => () => {
      if (make) throw make();
    };
    const opened = await openStatusBook({
      location: { root, statusBranch: "plumb-status", gitStop },
      timers: manualTimers(),
      log: log.logger,
      fence: fail(failing.fence),
      pushFence: { check: fail(failing.push) },
    });
    stop.abort();
    gitStop.unanswered = unanswered;
    await opened.flush();
    const said = log
      .lines()
      .map((l) => `${String(l["level"])} ${String(l["msg"])} ${(l["err"] as string | undefined) ?? ""}`);
    return { said, statusDir: join(root, ".plumb", "status"), lines: log.lines() };
  }

  const AT_STOP =
    "40 status branch not published: the git remote did not answer after the stop; the last status is in the status directory ";

  it("warns where the last status is when the lease lapsed at its push, the remote silent", async () => {
    const { said, lines, statusDir } = await stoppedBook({ push: LAPSE }, true);
    expect(said).toEqual([AT_STOP]);
    expect(lines[0]).toMatchObject({ status_dir: statusDir });
  });

  it("warns the same when the lease had lapsed before the publish, or its push ran out", async () => {
    expect((await stoppedBook({ fence: LAPSE }, true)).said).toEqual([AT_STOP]);
    const ranOut = () =>
      new GitStopped("stopped: the git remote did not answer within 3 s of the controller's stop");
    expect((await stoppedBook({ push: ranOut }, true)).said).toEqual([AT_STOP]);
  });

  it("still says a lock taken, or a lapse with the remote answering, as a loss", async () => {
    expect((await stoppedBook({ push: TAKEN }, true)).said).toEqual([
      `50 status branch not published ${TAKEN().message} [lock-lost]`,
    ]);
    expect((await stoppedBook({ push: LAPSE }, false)).said).toEqual([
      `50 status branch not published ${LAPSE().message} [lock-lost]`,
    ]);
    expect((await stoppedBook({ fence: TAKEN }, true)).said).toEqual([
      "40 lost the state lock: status branch not published ",
    ]);
  });
});

// A git source's store is in its checkout: a pulled commit can put a file at the path of one of the
// book's records. Between the reset to that commit and checkTracked, a reconcile's record (or a
// prune's removal) went to the store path and wrote over (or deleted) the commit's file in the
// working tree. It goes to the displaced records now, as once checkTracked has said the file.
describe("status book: a commit's file at a record's path, not yet checked", () => {
  it("is neither written over nor deleted; the record is kept displaced, from the book's own fields", async () => {
    const checkout = await mkdtemp(join(tmpdir(), "plumb-book-window-"));
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", checkout, "-c", "user.name=t", "-c", "user.email=t@localhost", ...args]);
    git("init", "-q");
    const statusDir = join(checkout, ".plumb", "status");
    const log = memoryLogger();
    const opened = await openStatusBook({
      location: { root: checkout },
      timers: manualTimers(),
      log: log.logger,
      displaced: await displacedRecords(checkout, statusDir, log.logger),
    });
    await opened.record(status("a"));
    const path = join(".plumb", "status", statusFileName("Deployment", "a"));
    const commitsText = `${JSON.stringify({ ...status("a", { id: "forged" }), seq: 1_000, applied_at: "2099-01-01T00:00:00.000Z", manifest_digest: "sha256:forged" })}\n`;
    await writeFile(join(checkout, path), commitsText);
    git("add", "-f", path);
    git("commit", "-qm", "a file at a's record path"); // as the reset to a pulled commit leaves it

    await opened.record(status("a", { sync: "OutOfSync", applied_at: "2026-01-01T00:00:00.000Z" }));
    expect(git("status", "--porcelain").toString()).toBe(""); // was " M": written over
    const kept = join(checkout, ".git", "plumb", "displaced-status", path);
    const displaced = JSON.parse(await readFile(kept, "utf8")) as Record<string, unknown>;
    expect(displaced).toMatchObject({ id: "id-a", sync: "OutOfSync", manifest_digest: null });
    expect(displaced.seq).toBeLessThan(1_000);

    await opened.forget("Deployment", "a"); // pruned meanwhile
    expect(git("status", "--porcelain").toString()).toBe(""); // was " D": deleted
    await expect(readFile(kept)).rejects.toThrow();
    await opened.checkTracked();
    expect(log.lines().some((l) => l.msg === "ignoring status file")).toBe(true);
  });
});

// Without displaced records (a --dir controller: the store is in the user's repository), a pruned
// object's removal deleted whatever file was at its record's path, one git tracks too.
it("status book: a prune's removal leaves a file git tracks at the record's path", async () => {
  const repo = await mkdtemp(join(tmpdir(), "plumb-book-dir-"));
  execFileSync("git", ["init", "-q", repo]);
  const opened = await openStatusBook({
    location: { root: repo },
    timers: manualTimers(),
    log: memoryLogger().logger,
  });
  await opened.record(status("a"));
  await opened.record(status("b"));
  const path = join(".plumb", "status", statusFileName("Deployment", "a"));
  execFileSync("git", ["-C", repo, "add", "-f", path]); // the user's, as far as git says
  await opened.forget("Deployment", "a");
  await opened.forget("Deployment", "b");
  expect(JSON.parse(await readFile(join(repo, path), "utf8"))).toMatchObject({ id: "id-a" }); // was deleted
  await expect(readFile(join(repo, ".plumb", "status", statusFileName("Deployment", "b")))).rejects.toThrow();
});
