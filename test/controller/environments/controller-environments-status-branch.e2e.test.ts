import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { waitFor } from "../support.js";
import {
  environmentOptions,
  PROD_KEY,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeTree,
} from "./fixture.js";

// --status-branch with environments: a controller following a git branch publishes each
// environment's records under .plumb/status/ENV/ on the status branch, each environment holding a
// lease of its own (refs/plumb/locks/BRANCH@ENV), so the two stores never exclude each other.

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });
const h = useEnvironmentsHarness("plumb-ctl-envs-branch-");

it("publishes each environment's records under ENV/ on the status branch, each with its own lease", async () => {
  const bare = join(h.dir, "manifests.git");
  const work = join(h.dir, "work");
  await run("git", ["init", "--bare", "-b", "main", bare]);
  await run("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  const tree = { ...h, dir: join(work, "deploy") };
  await mkdir(tree.dir, { recursive: true });
  await writeTree(tree);
  await git(work, "add", ".");
  await git(work, "commit", "-m", "environments");
  await git(work, "push", "origin", "main");

  const controller = await startController(
    environmentOptions(h, {
      source: {
        kind: "git",
        url: bare,
        branch: "main",
        path: "deploy",
        workDir: join(h.dir, "checkout"),
        intervalMs: 3_600_000,
      },
      statusBranch: "plumb-status",
    }),
  );
  h.controllers.push(controller);
  // ready() holds once the environments led so far are settled: wait until both are led here.
  const led = () => (controller.status().environments ?? []).filter((e) => e.role === "leader").length;
  await waitFor("both environments settled", () => led() === 2 && controller.ready(), 30_000);
  const leases = (await git(bare, "for-each-ref", "--format=%(refname)", "refs/plumb/locks/")).stdout;
  expect(leases.split("\n").filter(Boolean).sort()).toEqual([
    "refs/plumb/locks/plumb-status@prod",
    "refs/plumb/locks/plumb-status@staging",
  ]);
  await controller.stop(1_000); // publishes what is pending
  h.controllers.splice(0);

  const files = (await git(bare, "ls-tree", "-r", "--name-only", "plumb-status")).stdout
    .split("\n")
    .filter(Boolean);
  expect(files.filter((f) => f.endsWith(".json")).sort()).toEqual([
    "deploy/.plumb/status/prod/deployment.alpha.json",
    "deploy/.plumb/status/staging/deployment.alpha.json",
    "deploy/.plumb/status/staging/deployment.beta.json",
  ]);
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual({ alpha: 1 });
  expect(Object.keys(await revisionsOn(h.staging, STAGING_KEY)).sort()).toEqual(["alpha", "beta"]);
}, 90_000);
