import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { leaseRef } from "../../src/lock/branch/remote.js";
import { forceBranchUnlock } from "../../src/lock/branch/unlock.js";
import { newHolder } from "../../src/lock/holder.js";

// plumb unlock --force of a status branch lease whose holder renews it between unlock's look and its
// push: the compare-and-swap push loses, and unlock looks again, a bounded number of times. The
// holder's renewal is a pre-push hook of unlock's own git (core.hooksPath in the global config of the
// HOME its git environment names) that moves the lease ref in the remote after the remote advertised
// it, as a renewal landing first does ("cannot lock ref ... is at X but expected Y").

const exec = promisify(execFile);
const IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@t"];
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const REF = leaseRef("plumb-status");

let root: string;
let origin: string;
let clone: string;
let pushes: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-unlock-renewed-"));
  origin = join(root, "origin.git");
  await exec("git", ["init", "-q", "--bare", "--initial-branch=main", origin]);
  const seed = join(root, "seed");
  await exec("git", ["init", "-q", "--initial-branch=main", seed]);
  await exec("git", ["-C", seed, ...IDENTITY, "commit", "--allow-empty", "-qm", "init"]);
  await exec("git", ["-C", seed, "push", "-q", origin, "main"]);
  clone = join(root, "runner");
  await exec("git", ["clone", "-q", origin, clone]);
  pushes = join(root, "pushes");
});
afterEach(() => rm(root, { recursive: true, force: true }));

/** The live holder's lease (a process on another machine), written in the remote. */
async function liveLease() {
  const holder = { ...newHolder("plumb controller", Date.now()), host: "runner-7", space: "elsewhere" };
  const message = JSON.stringify({ holder, lease_ms: 30_000, renewals: 0, expires_at: "" });
  const sha = (
    await exec("git", ["--git-dir", origin, ...IDENTITY, "commit-tree", "-m", message, EMPTY_TREE])
  ).stdout.trim();
  await exec("git", ["--git-dir", origin, "update-ref", REF, sha]);
  return holder;
}

/**
 * unlock's target, its pushes of the lease counted in PUSHES; the first `renewals` of them each find
 * the lease renewed (a new commit with the same message) after the remote advertised it.
 */
async function renewedAtPushes(renewals: number) {
  const hooks = join(root, "hooks");
  await mkdir(hooks);
  const hook = join(hooks, "pre-push");
  await writeFile(
    hook,
    `#!/bin/sh
origin='${origin}'
while read -r _local _sha remote_ref _remote_sha; do
  [ "$remote_ref" = '${REF}' ] || continue
  echo push >> '${pushes}'
  [ "$(wc -l < '${pushes}')" -le ${renewals} ] || continue
  old=$(git --git-dir="$origin" rev-parse "$remote_ref")
  new=$(git --git-dir="$origin" log -1 --format=%B "$old" |
    git --git-dir="$origin" -c user.name=h -c user.email=h@h commit-tree -p "$old" ${EMPTY_TREE})
  git --git-dir="$origin" update-ref "$remote_ref" "$new" "$old"
done
exit 0
`,
  );
  await chmod(hook, 0o755);
  // Through the global config of a HOME of its own: simple-git refuses core.hooksPath in the
  // environment (GIT_CONFIG_KEY_n), as it should; the hook is the test's, not plumb's.
  const home = join(root, "home");
  await mkdir(home);
  await writeFile(join(home, ".gitconfig"), `[core]\n\thooksPath = ${hooks}\n`);
  const gitEnv: Record<string, string> = { HOME: home };
  for (const name of ["PATH", "TMPDIR"]) if (process.env[name]) gitEnv[name] = process.env[name];
  return { root: clone, branch: "plumb-status", gitEnv };
}

const pushCount = async () =>
  (await readFile(pushes, "utf8").catch(() => "")).split("\n").filter(Boolean).length;
const leaseNow = async () =>
  JSON.parse((await exec("git", ["--git-dir", origin, "log", "-1", "--format=%B", REF])).stdout) as {
    holder: { id: string };
    lease_ms: number;
    forced?: { at: string };
  };

describe("plumb unlock --force of a lease renewed between its look and its push", () => {
  it("renewed once: looks again and ends the renewed lease, saying when", async () => {
    const holder = await liveLease();
    const target = await renewedAtPushes(1);
    const before = Date.now();
    expect(await forceBranchUnlock(target)).toMatchObject({ id: holder.id });
    const after = Date.now();
    expect(await pushCount()).toBe(2);
    const ended = await leaseNow();
    expect(ended).toMatchObject({ holder: { id: holder.id }, lease_ms: 30_000 });
    // When it was ended, for whoever reads the lease commit (as expires_at: never compared).
    const at = Date.parse(ended.forced?.at ?? "");
    expect(at).toBeGreaterThanOrEqual(before - 1_000);
    expect(at).toBeLessThanOrEqual(after + 1_000);
  }, 60_000);

  it("renewed at every try: gives up after 10 tries, state-locked, the lease left as its holder's", async () => {
    const holder = await liveLease();
    const target = await renewedAtPushes(Number.MAX_SAFE_INTEGER);
    await expect(forceBranchUnlock(target)).rejects.toMatchObject({
      code: "state-locked",
      message:
        "the lease of status branch plumb-status was renewed at each of 10 tries to end it: run plumb unlock --force again",
    });
    expect(await pushCount()).toBe(10);
    const lease = await leaseNow();
    expect(lease.holder.id).toBe(holder.id);
    expect(lease).not.toHaveProperty("forced");
  }, 60_000);
});
