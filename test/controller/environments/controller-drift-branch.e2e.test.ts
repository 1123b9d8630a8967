import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { api, waitFor } from "../support.js";
import {
  environmentOptions,
  imageOn,
  PROD_KEY,
  revisionsOn,
  STAGING_KEY,
  useEnvironmentsHarness,
  writeTree,
} from "./fixture.js";

// controller --drift-branch with environments: each environment writes the live values of its
// drifted fields to a branch of its own, NAME/ENV, into the layer only that environment resolves
// (prod's override; the base of a deployment that runs in staging alone), as drift --write --env.

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });
const h = useEnvironmentsHarness("plumb-ctl-envs-drift-branch-");

async function patchImage(url: string, key: string, name: string, image: string) {
  const client = api(url, key);
  const live = await client.deployment(name);
  await client.call("PATCH", `/v2/deployments/${live.id}`, { source_revision_config: { image_uri: image } });
}

it("writes each environment's drift to NAME/ENV, into that environment's own layer", async () => {
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
  const alpha = await readFile(join(tree.dir, "alpha.yaml"), "utf8");
  const beta = await readFile(join(tree.dir, "beta.yaml"), "utf8");

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
      driftBranch: "plumb-drift",
    }),
  );
  h.controllers.push(controller);
  const led = () => (controller.status().environments ?? []).filter((e) => e.role === "leader").length;
  await waitFor("both environments settled", () => led() === 2 && controller.ready(), 30_000);

  await patchImage(h.prod.url, PROD_KEY, "alpha", "img/alpha:hotfix");
  await patchImage(h.staging.url, STAGING_KEY, "beta", "img/beta:hotfix");
  // The UI's changes are made (a PATCH answers once its revision is recorded): counted from here on.
  const counts = {
    staging: await revisionsOn(h.staging, STAGING_KEY),
    prod: await revisionsOn(h.prod, PROD_KEY),
  };
  await controller.checkDrift();

  const show = async (ref: string) => (await run("git", ["--git-dir", bare, "show", ref])).stdout;
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
  const message = (await run("git", ["--git-dir", bare, "log", "-1", "--format=%B", "plumb-drift/prod"]))
    .stdout;
  expect(message).toContain("plumb: write back drift found live in prod");
  expect(message).toContain("(into environments.prod.spec.source_revision_config.image_uri)");
  expect(await show("main:deploy/alpha.yaml")).toBe(alpha);
  // Reported, not healed: nothing was sent to either control plane.
  expect(await imageOn(h.prod, PROD_KEY, "alpha")).toBe("img/alpha:hotfix");
  expect(await revisionsOn(h.staging, STAGING_KEY)).toEqual(counts.staging);
  expect(await revisionsOn(h.prod, PROD_KEY)).toEqual(counts.prod);
}, 90_000);
