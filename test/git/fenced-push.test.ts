import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { acquireStateLock, forceUnlock } from "../../src/lock/index.js";
import { leaseRef } from "../../src/lock/branch/remote.js";
import { publishStatus } from "../../src/git/status/status-source.js";
import { originWithClones } from "../support/git-clones.js";
import { patientTime } from "../support/patient-time.js";

// A status-branch push carries the state lock's lease: one atomic push moves the status branch and
// the lease ref from the commit the holder holds to its renewal. A holder whose lease was taken
// while it still believed it held it (forced away, re-taken by another runner) pushes nothing: the
// branch keeps the new holder's records.

const exec = promisify(execFile);
let root: string;
let clones: string[];

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-fenced-push-"));
  clones = await originWithClones(root);
});
afterEach(() => rm(root, { recursive: true, force: true }));

const location = (clone: string) => ({
  root: clone,
  statusDir: join(clone, ".plumb", "status"),
  statusBranch: "plumb-status",
});
async function writeRecord(clone: string, text: string) {
  await mkdir(location(clone).statusDir, { recursive: true });
  await writeFile(join(location(clone).statusDir, "deployment.alpha.json"), `${text}\n`);
}
const remote = async (ref: string) =>
  (await exec("git", ["-C", clones[0]!, "ls-remote", "origin", ref])).stdout.split(/\s/)[0] ?? "";
const onBranch = async () => {
  await exec("git", ["-C", clones[0]!, "fetch", "-q", "origin", "+plumb-status:refs/check"]);
  return (await exec("git", ["-C", clones[0]!, "show", "refs/check:.plumb/status/deployment.alpha.json"]))
    .stdout;
};

it("a publish renews the lease in the same push; a holder whose lease was taken publishes nothing", async () => {
  const slow = { leaseMs: 30_000, renewMs: 10_000 }; // no renewal during the test: A notices nothing
  const a = await acquireStateLock(location(clones[0]!), { command: "plumb controller", ...slow });
  await writeRecord(clones[0]!, '{"by":"a","n":1}');
  const leaseBefore = await remote(leaseRef("plumb-status"));
  expect((await publishStatus(location(clones[0]!), "a: status", a.pushFence))?.pushed).toBe(true);
  const leaseAfter = await remote(leaseRef("plumb-status"));
  expect(leaseAfter).not.toBe(leaseBefore); // renewed by the push itself
  expect(await onBranch()).toContain('"by":"a"');
  // Its next renewal starts from the lease the push left: it still holds it.
  await writeRecord(clones[0]!, '{"by":"a","n":2}');
  expect((await publishStatus(location(clones[0]!), "a: status", a.pushFence))?.pushed).toBe(true);
  a.assertHeld();

  // The lease is forced away and taken by another runner (once a lease passed on its clock), which
  // publishes its records.
  await forceUnlock(location(clones[1]!));
  const b = await acquireStateLock(location(clones[1]!), {
    command: "plumb controller",
    ...slow,
    timeoutMs: 600_000,
    ...patientTime(),
  });
  await writeRecord(clones[1]!, '{"by":"b"}');
  expect((await publishStatus(location(clones[1]!), "b: status", b.pushFence))?.pushed).toBe(true);

  // A has not noticed (no renewal yet, its own deadline not passed): its push is refused as a whole.
  await writeRecord(clones[0]!, '{"by":"a","n":3}');
  await expect(publishStatus(location(clones[0]!), "a: stale", a.pushFence)).rejects.toMatchObject({
    code: "lock-lost",
  });
  expect(await onBranch()).toContain('"by":"b"');
  expect(a.lost.aborted).toBe(true);
  await b.release();
  await a.release();
}, 60_000);
