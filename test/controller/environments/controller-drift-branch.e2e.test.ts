import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it, onTestFailed } from "vitest";
import { memoryLogger } from "../support.js";
import { api } from "../support.js";
import {
  git,
  imageOn,
  PROD_KEY,
  pushTreeToGit,
  revisionsOn,
  STAGING_KEY,
  startGitController,
  useEnvironmentsHarness,
} from "./fixture.js";

// controller --drift-branch with environments: each environment writes the live values of its
// drifted fields to a branch of its own, NAME/ENV, into the layer only that environment resolves
// (prod's override; the base of a deployment that runs in staging alone), as drift --write --env.

const h = useEnvironmentsHarness("plumb-ctl-envs-drift-branch-");

async function patchImage(url: string, key: string, name: string, image: string) {
  const client = api(url, key);
  const live = await client.deployment(name);
  await client.call("PATCH", `/v2/deployments/${live.id}`, { source_revision_config: { image_uri: image } });
}

it("writes each environment's drift to NAME/ENV, into that environment's own layer", async () => {
  const { bare, deployDir } = await pushTreeToGit(h);
  const alpha = await readFile(join(deployDir, "alpha.yaml"), "utf8");
  const beta = await readFile(join(deployDir, "beta.yaml"), "utf8");
  const log = memoryLogger();
  // A failure says what the controller did: which store checked drift, what each writer decided.
  onTestFailed(() => console.error(log.text()));
  const controller = await startGitController(h, bare, { driftBranch: "plumb-drift", logger: log.logger });

  await patchImage(h.prod.url, PROD_KEY, "alpha", "img/alpha:hotfix");
  await patchImage(h.staging.url, STAGING_KEY, "beta", "img/beta:hotfix");
  // The UI's changes are made (a PATCH answers once its revision is recorded): counted from here on.
  const counts = {
    staging: await revisionsOn(h.staging, STAGING_KEY),
    prod: await revisionsOn(h.prod, PROD_KEY),
  };
  await controller.checkDrift();

  const show = async (ref: string) => (await git(bare, "show", ref)).stdout;
  // prod's value came from prod's override: only that line changes; staging's base is untouched.
  expect(await show("plumb-drift/prod:deploy/alpha.yaml")).toBe(
    alpha.replace("img/alpha:prod-1", "img/alpha:hotfix"),
  );
  expect(await show("plumb-drift/prod:deploy/beta.yaml")).toBe(beta);
  // beta runs in staging alone: its base is staging's own.
  expect(await show("plumb-drift/staging:deploy/beta.yaml")).toBe(
    beta.replace("img/beta:1", "img/beta:hotfix"),
  );
  expect(await show("plumb-drift/staging:deploy/alpha.yaml")).toBe(alpha);
  const message = (await git(bare, "log", "-1", "--format=%B", "plumb-drift/prod")).stdout;
  expect(message).toContain("plumb: write back drift found live in prod");
  expect(message).toContain("(into environments.prod.spec.source_revision_config.image_uri)");
  expect(await show("main:deploy/alpha.yaml")).toBe(alpha);
  // Reported, not healed: nothing was sent to either control plane.
  expect(await imageOn(h.prod, PROD_KEY, "alpha")).toBe("img/alpha:hotfix");
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual(counts.staging);
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual(counts.prod);
}, 90_000);
