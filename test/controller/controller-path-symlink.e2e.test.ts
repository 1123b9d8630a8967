import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { readApiOptions } from "../../src/api/config.js";
import { settingsOf } from "../../src/cli/environments.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { environmentDoc } from "./environments/fixture.js";
import { fastControllerOptions } from "./harness.js";
import { manifestRemote } from "../support/git-clones.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// A controller following a branch reads its manifests under --path in its own checkout, and writes
// its records in --path/.plumb/status/. A symlink committed to the repository (deploy -> /etc, or
// deploy/.plumb -> a directory of the host) had it read manifests, and write records, outside the
// checkout. It now refuses a --path (or .plumb) whose real location is outside: at start, and for a
// later commit, which is not followed. Counted on the control plane (the deployment only the outside
// directory declares is never made) and on the host's directory (no record written there).

let tmp: string;
let work: string;
let bare: string;
let outside: string;
let push: (message: string) => Promise<void>;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-ctl-path-"));
  outside = join(tmp, "host-dir"); // stands for /etc or a home directory
  await writeDoc(outside, "o.yaml", container("outsider", "img/outsider:1"));
  ({ bare, work, push } = await manifestRemote(tmp));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  // A fetch the stop ended may still be taking its git processes down (stoppable-git.ts: up to 2 s).
  await rm(tmp, { recursive: true, force: true, maxRetries: 30, retryDelay: 100 });
});

const options = (path: string, log = memoryLogger()) =>
  fastControllerOptions(cp, {
    source: { kind: "git", url: bare, branch: "main", path, workDir: join(tmp, "checkout"), intervalMs: 50 },
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    logger: log.logger,
  });
const names = async () => (await api(cp.url).deployments()).map((d) => d.name).sort();

it("--path a committed symlink to a directory outside the checkout: refused at start, nothing read", async () => {
  await symlink(outside, join(work, "deploy"));
  await push("deploy -> a host directory");
  const started = startController(options("deploy"));
  await expect(started).rejects.toMatchObject({ code: "path-outside-checkout" });
  await expect(started).rejects.toThrow(/--path deploy: deploy .*leads to .*host-dir through a symlink/);
  expect(await names()).toEqual([]);
});

it("--path a directory through a symlinked parent (deploy/prod, deploy -> outside): refused", async () => {
  await writeDoc(join(outside, "prod"), "p.yaml", container("outsider-prod", "img/p:1"));
  await symlink(outside, join(work, "deploy"));
  await push("deploy -> a host directory");
  await expect(startController(options("deploy/prod"))).rejects.toMatchObject({
    code: "path-outside-checkout",
  });
  expect(await names()).toEqual([]);
});

it("--path with '..' out of the checkout: refused", async () => {
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await push("first");
  await expect(startController(options("../host-dir"))).rejects.toMatchObject({
    code: "path-outside-checkout",
  });
  expect(await names()).toEqual([]);
});

it("a committed deploy/.plumb symlink to a host directory: refused, no record written there", async () => {
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await symlink(outside, join(work, "deploy", ".plumb"));
  await push("records go elsewhere");
  await expect(startController(options("deploy"))).rejects.toThrow(/deploy\/\.plumb .*through a symlink/);
  expect(existsSync(join(outside, "status"))).toBe(false);
  expect(await readdir(outside)).toEqual(["o.yaml"]);
});

it("a committed deploy/.plumb that is a symlink loop: refused as a loop, not as a link to nothing", async () => {
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await symlink(".plumb", join(work, "deploy", ".plumb"));
  await push("a link to itself");
  const started = startController(options("deploy"));
  await expect(started).rejects.toMatchObject({ code: "path-outside-checkout" });
  await expect(started).rejects.toThrow(
    /deploy\/\.plumb in the checkout of .* is a symlink loop \(ELOOP\) that never reaches a directory; the controller/,
  );
  expect(await names()).toEqual([]);
});

it("with --path, a committed .plumb at the checkout's root (the older layout's store, read and moved) linked out: refused", async () => {
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await symlink(outside, join(work, ".plumb"));
  await push("the older layout's records go elsewhere");
  await expect(startController(options("deploy"))).rejects.toThrow(/: \.plumb .*through a symlink/);
  expect(await readdir(outside)).toEqual(["o.yaml"]);
});

it("a committed environment's store (deploy/.plumb/status/prod) linked to a host directory: refused, no record written there", async () => {
  await writeDoc(join(work, "deploy"), "env-prod.yaml", environmentDoc("prod", cp.url, "PROD_KEY"));
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await mkdir(join(work, "deploy", ".plumb", "status"), { recursive: true });
  await symlink(outside, join(work, "deploy", ".plumb", "status", "prod"));
  await push("prod's records go elsewhere");
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, PROD_KEY: DEFAULT_API_KEY };
  const started = startController({
    ...options("deploy"),
    env,
    environmentApi: (environment, root) => {
      const settings = settingsOf(environment, root, env);
      return readApiOptions(settings.env, settings.flags);
    },
  }).then((c) => (controller = c));
  await expect(started).rejects.toThrow(/deploy\/\.plumb\/status\/prod .*through a symlink/);
  expect(await readdir(outside)).toEqual(["o.yaml"]);
  expect(await names()).toEqual([]);
});

it("a symlinked --path inside the checkout is followed", async () => {
  await writeDoc(join(work, "real"), "a.yaml", container("alpha", "img/alpha:1"));
  await symlink("real", join(work, "deploy"));
  await push("deploy -> real");
  controller = await startController(options("deploy"));
  await waitFor("ready", () => controller!.ready());
  expect(await names()).toEqual(["alpha"]);
});

it("a later commit that turns --path into a symlink out of the checkout is not followed", async () => {
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await push("first");
  const log = memoryLogger();
  controller = await startController(options("deploy", log));
  await waitFor("ready", () => controller!.ready());
  const first = controller.status().source.commit;
  await rm(join(work, "deploy"), { recursive: true });
  await symlink(outside, join(work, "deploy"));
  await push("deploy -> a host directory");
  await waitFor(
    "the commit refused",
    () => log.text().includes("path-outside-checkout") || log.text().includes("through a symlink"),
  );
  // The checkout stays on the last commit it followed; a rescan reads that one.
  expect(controller.status().source.commit).toBe(first);
  await controller.rescan?.();
  expect(await names()).toEqual(["alpha"]);
  expect(existsSync(join(tmp, "checkout", "deploy", "a.yaml"))).toBe(true);
});
