import { expect, it } from "vitest";
import {
  git,
  PROD_KEY,
  pushTreeToGit,
  revisionsOn,
  STAGING_KEY,
  startGitController,
  useEnvironmentsHarness,
} from "./fixture.js";

// --status-branch with environments: a controller following a git branch publishes each
// environment's records under .plumb/status/ENV/ on the status branch, each environment holding a
// lease of its own (refs/plumb/locks/BRANCH@ENV), so the two stores never exclude each other.

const h = useEnvironmentsHarness("plumb-ctl-envs-branch-");

it("publishes each environment's records under ENV/ on the status branch, each with its own lease", async () => {
  const { bare } = await pushTreeToGit(h);
  const controller = await startGitController(h, bare, { statusBranch: "plumb-status" });
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
