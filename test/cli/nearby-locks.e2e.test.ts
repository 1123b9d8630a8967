import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { acquireStateLock } from "../../src/lock/index.js";
import { api } from "../controller/support.js";
import { plain, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// `apply TREE` and `apply TREE/sub` lock different stores, and both apply what is under sub: run
// at once, each sent every change there (two revisions for one change, counted: 20 deployments,
// 40 revisions). A writer also locks the stores nearby that are in use (docs/status.md "Stores
// above and below"), so while one holds the other's store, the other is refused and sends nothing.
// The other writer is stood for by the real state lock held on that store.

let planes: Awaited<ReturnType<typeof startTwoPlanes>>;
let repo: string;
const env = () => ({ PLUMB_API_URL: planes.staging.url, PLUMB_API_KEY: STAGING_KEY });
const apply = (path: string) => runCommand(applyCommand, [path, "--yes", "--no-wait"], planes, env());

beforeAll(async () => {
  planes = await startTwoPlanes();
  repo = await mkdtemp(join(tmpdir(), "plumb-nearby-locks-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "sub"));
  await writeFile(join(repo, "sub", "a.yaml"), plain("a"));
});
afterAll(async () => {
  await planes?.staging.stop();
  await planes?.prod.stop();
  await rm(repo, { recursive: true, force: true });
});

const revisions = async () => {
  const client = api(planes.staging.url, STAGING_KEY);
  return (await client.revisions((await client.deployment("a")).id)).length;
};

/** A new image for `a`, so that an apply has something to send. */
const bump = async (tag: string) => {
  const file = join(repo, "sub", "a.yaml");
  await writeFile(file, (await readFile(file, "utf8")).replace(/img\/a:[^"]+/, `img/a:${tag}`));
};

/** Runs `work` while another writer holds the store of `dir`. */
async function whileHeld<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const other = await acquireStateLock(
    { statusDir: join(dir, ".plumb", "status") },
    { command: "plumb apply (another)" },
  );
  try {
    return await work();
  } finally {
    await other.release();
  }
}

it("apply of a sub-directory is refused, sending nothing, while an apply of the tree holds its store", async () => {
  expect((await apply(repo)).code).toBe(0);
  await bump("2");
  const refused = whileHeld(repo, () => apply(join(repo, "sub")));
  await expect(refused).rejects.toMatchObject({ code: "state-locked" });
  await expect(refused).rejects.toThrow(join(repo, ".plumb", "status"));
  expect(await revisions()).toBe(1);
  expect((await apply(join(repo, "sub"))).code).toBe(0); // once it is free
  expect(await revisions()).toBe(2);
});

it("apply through a link to the sub-directory (from outside the repository) is refused while the tree's store is held", async () => {
  // The stores above were found from the link's own parents: outside any repository, none, so the
  // apply through the link ran beside the tree's and both sent sub's change.
  const outside = await mkdtemp(join(tmpdir(), "plumb-nearby-link-"));
  try {
    await symlink(join(repo, "sub"), join(outside, "agents"));
    await bump("2b");
    const before = await revisions();
    const refused = whileHeld(repo, () => apply(join(outside, "agents")));
    await expect(refused).rejects.toMatchObject({ code: "state-locked" });
    await expect(refused).rejects.toThrow(join(repo, ".plumb", "status"));
    expect(await revisions()).toBe(before);
    expect((await apply(join(outside, "agents"))).code).toBe(0); // once it is free
    expect(await revisions()).toBe(before + 1);
  } finally {
    await rm(outside, { recursive: true, force: true });
  }
});

it("apply of the tree is refused, sending nothing, while an apply of a sub-directory holds its store", async () => {
  await bump("3");
  const before = await revisions();
  const refused = whileHeld(join(repo, "sub"), () => apply(repo));
  await expect(refused).rejects.toMatchObject({ code: "state-locked" });
  await expect(refused).rejects.toThrow(join(repo, "sub", ".plumb", "status"));
  expect(await revisions()).toBe(before);
  expect((await apply(repo)).code).toBe(0);
  expect(await revisions()).toBe(before + 1);
});

it("apply of the tree and of a sub-directory at once, with --lock-timeout: one waits for the other, one revision", async () => {
  // Each took its own store first and then waited for the other's: both timed out, nothing applied.
  // The stores are now taken in one order (by path), so the later one waits and then has nothing
  // left to send.
  await bump("4");
  const before = await revisions();
  const waiting = (path: string) =>
    runCommand(applyCommand, [path, "--yes", "--no-wait", "--lock-timeout", "20s"], planes, env());
  const both = await Promise.allSettled([waiting(repo), waiting(join(repo, "sub"))]);
  expect(both.map((r) => (r.status === "rejected" ? String(r.reason) : "ok"))).toEqual(["ok", "ok"]);
  expect(await revisions()).toBe(before + 1);
}, 60_000);

it("a store nearby first locked while this apply waited for its own: seen after, and waited for", async () => {
  // The nearby stores are scanned before any is locked. A writer that starts using a store below
  // while this apply waits for its own was not in that scan: PATH's own lock taken, the scan is
  // made again, and the apply lets go and takes them all in order, so it waits for that writer.
  await bump("5");
  const before = await revisions();
  await rm(join(repo, "sub", ".plumb"), { recursive: true, force: true }); // sub: not in use until later
  const tree = await acquireStateLock(
    { statusDir: join(repo, ".plumb", "status") },
    { command: "plumb apply (first)" },
  );
  const applying = runCommand(
    applyCommand,
    [repo, "--yes", "--no-wait", "--lock-timeout", "20s"],
    planes,
    env(),
  );
  await new Promise((resolve) => setTimeout(resolve, 500)); // its scan is made (were it not: it sees sub below)
  const sub = await acquireStateLock(
    { statusDir: join(repo, "sub", ".plumb", "status") },
    { command: "plumb apply (sub)" },
  );
  await tree.release();
  const first = await Promise.race([
    applying.then(() => "finished"),
    new Promise((resolve) => setTimeout(() => resolve("waiting"), 3_000)),
  ]);
  expect(first).toBe("waiting");
  expect(await revisions()).toBe(before);
  await sub.release();
  expect((await applying).code).toBe(0);
  expect(await revisions()).toBe(before + 1);
}, 60_000);
