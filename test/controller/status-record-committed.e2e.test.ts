import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { useGitControllerHarness } from "./harness.js";
import { gitIn } from "../support/git-clones.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// A controller following a branch keeps its records in the checkout (`--path/.plumb/status/`) and
// publishes them to --status-branch. A pulled commit can add a file at the path of one of those
// records: the checkout's reset writes the committed file over the controller's own. The committed
// file is not the controller's record (tracked-records.ts), and the controller's record must not be
// lost for it: not from the status branch, not from the controller's next start.

const run = promisify(execFile);
const h = useGitControllerHarness("plumb-ctl-committed-");

const start = (log: ReturnType<typeof memoryLogger>) =>
  h.start({ statusBranch: "plumb-status", env: { PATH: process.env.PATH, HOME: h.tmp }, logger: log.logger });

const RECORD = "deploy/.plumb/status/deployment.alpha.json";
const onBranch = async (): Promise<Record<string, unknown> | undefined> => {
  const shown = await run("git", ["--git-dir", h.bare, "show", `plumb-status:${RECORD}`]).catch(
    () => undefined,
  );
  return shown ? (JSON.parse(shown.stdout) as Record<string, unknown>) : undefined;
};

it("a pulled commit that adds a file at the path of the controller's own record: the record stays on the status branch, the file is not trusted", async () => {
  const { cp, tmp, work } = h;
  const client = api(cp.url);
  const first = memoryLogger();
  h.controller = await start(first);
  await waitFor("ready", () => h.controller!.ready());
  const own = join(tmp, "checkout", RECORD);
  const mine = JSON.parse(await readFile(own, "utf8")) as Record<string, unknown>;

  // The commit: a file where alpha's record is (saying alpha is of another deployment), and a change
  // to alpha, so the controller writes alpha's record again after the reset.
  const forged = { ...mine, id: "00000000-0000-0000-0000-000000000000" };
  await writeDoc(join(work, "deploy", ".plumb", "status"), "deployment.alpha.json", JSON.stringify(forged));
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:2"));
  await gitIn(work, "add", "-A");
  await gitIn(work, "commit", "-qm", "alpha 2, and a file at alpha's record");
  await gitIn(work, "push", "-q", "origin", "main");
  const commit = (await gitIn(work, "rev-parse", "HEAD")).stdout.trim();
  const image = async () => (await client.deployment("alpha")).source_revision_config?.image_uri;
  await waitFor("the commit applied", async () => (await image()) === "img/alpha:2");
  await waitFor("alpha's record of the commit", () =>
    h.controller!.status().objects.some((o) => o.name === "alpha" && o.git_commit === commit),
  );
  await h.controller.stop(1_000); // publishes the status branch
  h.controller = undefined;

  const published = await onBranch();
  expect(published?.id).toBe(mine.id);
  expect(published?.git_commit).toBe(commit);
  expect(first.text()).toContain("deployment.alpha.json");
  expect(first.text()).toContain("tracked by git");

  // The next start, on the same checkout, knows alpha from the controller's own record.
  const second = memoryLogger();
  h.controller = await start(second);
  const atStart = h.controller.status().objects.find((o) => o.name === "alpha");
  expect(atStart?.id).toBe(mine.id);
  expect(atStart?.git_commit).toBe(commit);
  await waitFor("ready again", () => h.controller!.ready());

  // A commit that takes the file away again (the reset deletes it from the checkout), and adds beta:
  // alpha's record is written back, and stays on the branch.
  await gitIn(work, "rm", "-q", "deploy/.plumb/status/deployment.alpha.json");
  await writeDoc(join(work, "deploy"), "b.yaml", container("beta", "img/beta:1"));
  await gitIn(work, "add", "-A");
  await gitIn(work, "commit", "-qm", "beta, and the file gone");
  await gitIn(work, "push", "-q", "origin", "main");
  await waitFor("beta's record", () => h.controller!.status().objects.some((o) => o.name === "beta"));
  await h.controller.stop(1_000);
  h.controller = undefined;
  expect((JSON.parse(await readFile(own, "utf8")) as Record<string, unknown>).id).toBe(mine.id);
  expect((await onBranch())?.id).toBe(mine.id);
}, 60_000);
