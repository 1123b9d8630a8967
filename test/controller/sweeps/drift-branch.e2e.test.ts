import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import { fastControllerOptions } from "../harness.js";
import { api, waitFor } from "../support.js";

// controller --drift-branch: a change made live is written back to the manifests on a branch of
// the git source (only the drifted line changes), committed with the field in the message, pushed.

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });

const MANIFEST = `# The alpha agent; owned by #team-alpha.
apiVersion: plumb/v1
kind: Deployment
metadata:
  name: alpha # stable
spec:
  source: internal_container
  source_revision_config:
    image_uri: img/alpha:1 # pinned by the release job
`;

let tmp: string;
let bare: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-ctl-drift-branch-"));
  bare = join(tmp, "manifests.git");
  const work = join(tmp, "work");
  await run("git", ["init", "--bare", "-b", "main", bare]);
  await run("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  await run("mkdir", ["-p", join(work, "deploy")]);
  await writeFile(join(work, "deploy", "alpha.yaml"), MANIFEST);
  await git(work, "add", ".");
  await git(work, "commit", "-m", "first");
  await git(work, "push", "origin", "main");
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  await rm(tmp, { recursive: true, force: true });
});

it("commits the live value of a drifted field to the branch and pushes it; main is untouched", async () => {
  controller = await startController(
    fastControllerOptions(cp, {
      source: {
        kind: "git",
        url: bare,
        branch: "main",
        path: "deploy",
        workDir: join(tmp, "checkout"),
        intervalMs: 3_600_000,
      },
      driftBranch: "plumb-drift",
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    }),
  );
  await waitFor("ready", () => controller!.ready());
  const alpha = await api(cp.url).deployment("alpha");
  await fetch(`${cp.url}/v2/deployments/${alpha.id}`, {
    method: "PATCH",
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
    body: JSON.stringify({ source_revision_config: { image_uri: "img/alpha:hotfix" } }),
  });
  await controller.checkDrift();

  const file = (await run("git", ["--git-dir", bare, "show", "plumb-drift:deploy/alpha.yaml"])).stdout;
  expect(file).toBe(MANIFEST.replace("img/alpha:1 #", "img/alpha:hotfix #"));
  const message = (await run("git", ["--git-dir", bare, "log", "-1", "--format=%B", "plumb-drift"])).stdout;
  expect(message).toContain('- alpha source_revision_config.image_uri: "img/alpha:1" -> "img/alpha:hotfix"');
  expect((await run("git", ["--git-dir", bare, "show", "main:deploy/alpha.yaml"])).stdout).toBe(MANIFEST);
  // The live change was reported, not healed.
  expect((await api(cp.url).deployment("alpha")).source_revision_config.image_uri).toBe("img/alpha:hotfix");
});

it("needs a git source and no --self-heal", async () => {
  await expect(
    startController(fastControllerOptions(cp, { source: { kind: "dir", dir: tmp }, driftBranch: "x" })),
  ).rejects.toMatchObject({ code: "usage" });
});
