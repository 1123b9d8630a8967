import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newHolder } from "../../src/lock/holder.js";
import { acquireStateLock, forceUnlock, readStateLock } from "../../src/lock/index.js";
import { lockPathOf } from "../../src/lock/local/local-lock.js";

// A plumb killed between its mkdir claim and the rename of its prepared directory onto it leaves an
// empty <status>.lock (the older plumb's format) and, beside it, the prepared <status>.lock.new-<id>
// naming it. That claim is its lock, not an older plumb's: a dead local claimant is stale at once.

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-lock-claim-"));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const target = () => ({ statusDir: join(root, ".plumb", "status") });
const lockPath = () => lockPathOf(target());

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""]);
  return new Promise<number>((resolve) => child.once("exit", () => resolve(child.pid!)));
}

/** What a plumb killed right after its mkdir claim leaves on disk. */
async function crashedClaim(pid: number, options: { host?: string; preparedAgoMs?: number } = {}) {
  const holder = {
    ...newHolder("plumb apply", Date.now()),
    pid,
    ...(options.host ? { host: options.host } : {}),
  };
  const prepared = `${lockPath()}.new-${holder.id}`;
  await mkdir(prepared, { recursive: true });
  await writeFile(join(prepared, "holder.json"), JSON.stringify({ ...holder, lease_ms: 30_000 }));
  await writeFile(join(prepared, `beat-${holder.id}-0`), "");
  if (options.preparedAgoMs) {
    const then = new Date(Date.now() - options.preparedAgoMs);
    await utimes(join(prepared, "holder.json"), then, then);
  }
  await mkdir(lockPath());
  return { holder, prepared };
}

const siblings = async () => (await readdir(join(root, ".plumb"))).sort();

describe("the empty claim of a plumb that crashed before its rename", () => {
  it("is taken at once when its claimant is a process of this host that is gone, and its prepared directory goes", async () => {
    await crashedClaim(await deadPid());
    const lock = await acquireStateLock(target(), { command: "plumb controller" });
    expect(await readStateLock(target())).toMatchObject({ id: lock.holder.id, command: "plumb controller" });
    expect(await siblings()).toEqual(["status.lock", "status.lock.json"]);
    await lock.release();
    expect(await siblings()).toEqual([]);
  });

  it("is the claimant's lock while it may be alive: refused naming it, never as an older plumb's", async () => {
    const { holder } = await crashedClaim(process.pid + 1_000_000, { host: "build-7" });
    const error = await acquireStateLock(target(), { command: "plumb apply" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "state-locked" });
    expect((error as Error).message).toContain(`held by plumb apply (pid ${holder.pid} on build-7)`);
    expect((error as Error).message).not.toContain("older plumb");
    expect(await readStateLock(target())).toMatchObject({ id: holder.id, host: "build-7" });
  });

  it("plumb unlock --force removes it and the prepared directory", async () => {
    const { holder } = await crashedClaim(process.pid + 1_000_000, { host: "build-7" });
    expect(await forceUnlock(target())).toMatchObject({ id: holder.id });
    expect(await siblings()).toEqual([]);
  });

  it("a prepared directory written after an older plumb's lock (a contender's) does not name it", async () => {
    await crashedClaim(await deadPid());
    const before = new Date(Date.now() - 2_000);
    await utimes(lockPath(), before, before);
    const error = await acquireStateLock(target(), { command: "plumb apply" }).catch((e: unknown) => e);
    expect((error as Error).message).toContain("locked by an older plumb");
  });

  it("a prepared directory left long before an older plumb's lock does not name that lock", async () => {
    await crashedClaim(await deadPid(), { preparedAgoMs: 60_000 });
    const error = await acquireStateLock(target(), { command: "plumb apply" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "state-locked" });
    expect((error as Error).message).toContain("locked by an older plumb");
    expect(await readdir(lockPath())).toEqual([]);
  });
});
