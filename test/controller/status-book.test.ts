import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStatusBook, sameRecord } from "../../src/controller/status-book.js";
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
