import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { displacedRecords } from "../../src/controller/displaced-records.js";
import { formatObjectStatus, type ObjectStatus } from "../../src/status/status-store.js";
import { status } from "./fixtures.js";
import { memoryLogger } from "./support.js";

// The controller's records kept in its checkout's git directory while a commit's file holds their
// path in the store (docs/status.md): only this store's, only a record that is what its name says.

const run = promisify(execFile);
let checkout: string;
let store: string;
let kept: string;
beforeEach(async () => {
  checkout = await mkdtemp(join(tmpdir(), "plumb-displaced-"));
  await run("git", ["init", "-q", checkout]);
  store = join(checkout, "deploy", ".plumb", "status");
  kept = join(checkout, ".git", "plumb", "displaced-status", "deploy", ".plumb", "status");
  await mkdir(kept, { recursive: true });
});
afterEach(() => rm(checkout, { recursive: true, force: true }));

const keep = (file: string, record: ObjectStatus) => writeFile(join(kept, file), formatObjectStatus(record));
const statusesOf = async (storeDir: string, tracked: ReadonlySet<string> | undefined) => {
  const log = memoryLogger();
  const statuses = new Map<string, ObjectStatus>();
  await (await displacedRecords(checkout, storeDir, log.logger))!.restore(tracked, statuses);
  return { statuses, log };
};

describe("displaced status records", () => {
  it("are the checkout's store's only: none for a store outside the checkout, none read for another store in it", async () => {
    await keep("deployment.a.json", status("a"));
    const outside = await mkdtemp(join(tmpdir(), "plumb-displaced-out-"));
    expect(await displacedRecords(checkout, outside, memoryLogger().logger)).toBeUndefined();
    await rm(outside, { recursive: true });
    const other = join(checkout, "other", ".plumb", "status");
    expect((await statusesOf(other, new Set(["deployment.a.json"]))).statuses.size).toBe(0);
    expect((await statusesOf(store, new Set(["deployment.a.json"]))).statuses.get("Deployment/a")?.id).toBe(
      "id-a",
    );
  });

  it("are kept for a store under a directory whose name starts with two dots (inside the checkout)", async () => {
    const dotted = join(checkout, "..deploy", ".plumb", "status");
    const dottedKept = join(checkout, ".git", "plumb", "displaced-status", "..deploy", ".plumb", "status");
    await mkdir(dottedKept, { recursive: true });
    await writeFile(join(dottedKept, "deployment.a.json"), formatObjectStatus(status("a")));
    const { statuses } = await statusesOf(dotted, new Set(["deployment.a.json"]));
    expect(statuses.get("Deployment/a")?.id).toBe("id-a");
  });

  it("reads only a regular file holding the record its name says", async () => {
    await keep("deployment.b.json", status("c")); // named b, says c
    const elsewhere = join(checkout, "a.json");
    await writeFile(elsewhere, formatObjectStatus(status("d")));
    await symlink(elsewhere, join(kept, "deployment.d.json"));
    const tracked = new Set(["deployment.b.json", "deployment.d.json"]);
    const { statuses, log } = await statusesOf(store, tracked);
    expect(statuses.size).toBe(0);
    expect(log.lines().filter((l) => l.msg === "ignoring displaced status record")).toHaveLength(2);
  });

  it("writes a record back to the store once git no longer tracks its file there, never when git could not say", async () => {
    await keep("deployment.a.json", status("a"));
    expect((await statusesOf(store, undefined)).statuses.has("Deployment/a")).toBe(true);
    expect(await readdir(store).catch(() => [])).toEqual([]);
    await statusesOf(store, new Set());
    const back = JSON.parse(await readFile(join(store, "deployment.a.json"), "utf8")) as ObjectStatus;
    expect(back.id).toBe("id-a");
    expect(await readdir(kept)).toEqual([]);
  });
});
