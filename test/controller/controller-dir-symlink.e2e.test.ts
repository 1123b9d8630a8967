import { mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { PlumbError } from "../../src/errors.js";
import { fastControllerOptions } from "./harness.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// A --dir controller writes its state only inside the tree it was given (docs/controller.md
// "Symlinks in --dir"): a `.plumb` (or `.plumb/status`, or an environment's store) that is a
// symlink out of the tree is refused at start (store-outside-dir), as a git controller refuses a
// committed one (path-outside-checkout); --status-dir names a store elsewhere on purpose. A
// manifest directory linked from outside is not read (symlink-outside-root, docs/manifests.md).

let tmp: string;
let tree: string;
let outside: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-ctl-dir-link-"));
  tree = join(tmp, "tree");
  outside = join(tmp, "outside");
  await mkdir(outside, { recursive: true });
  await writeDoc(tree, "a.yaml", container("alpha", "img/alpha:1"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  await rm(tmp, { recursive: true, force: true });
});

const start = (statusDir?: string) =>
  startController(
    fastControllerOptions(cp, {
      source: { kind: "dir", dir: tree },
      ...(statusDir ? { statusDir } : {}),
      logger: memoryLogger().logger,
    }),
  );

const refusal = async (): Promise<PlumbError> => {
  const error = await start().then(
    async (c) => {
      controller = c;
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlumbError);
  return error as PlumbError;
};

it.each([
  ["its .plumb", [".plumb"]],
  ["its .plumb/status", [".plumb", "status"]],
  ["an environment's store in it", [".plumb", "status", "prod"]],
])(
  "%s a symlink out of the tree: refused at start, nothing written outside, nothing sent",
  async (_, parts) => {
    await mkdir(join(tree, ...parts.slice(0, -1)), { recursive: true });
    await symlink(outside, join(tree, ...parts));
    const error = await refusal();
    expect(error.code).toBe("store-outside-dir");
    expect(error.message).toContain(join(...parts));
    expect(error.message).toContain(outside);
    expect(error.message).toContain("--status-dir");
    expect(await readdir(outside)).toEqual([]);
    expect(await api(cp.url).deployments()).toEqual([]);
  },
);

it("a link that stays inside the tree is followed, and --status-dir may name a store outside", async () => {
  await mkdir(join(tree, "state"), { recursive: true });
  await symlink(join(tree, "state"), join(tree, ".plumb"));
  controller = await start();
  await waitFor("ready", () => controller!.ready());
  expect(await readdir(join(tree, "state", "status"))).toContain("deployment.alpha.json");
  await controller.stop(1_000);
  controller = undefined;

  await symlink(outside, join(tree, "state", "status-elsewhere"));
  await rm(join(tree, ".plumb"));
  await symlink(outside, join(tree, ".plumb"));
  controller = await start(join(tmp, "chosen"));
  await waitFor("ready with --status-dir", () => controller!.ready());
  expect(await readdir(join(tmp, "chosen"))).toContain("deployment.alpha.json");
  expect(await readdir(outside)).toEqual([]);
});

it("a manifest directory linked from outside the tree is not read", async () => {
  await writeDoc(join(tmp, "elsewhere"), "b.yaml", container("beta", "img/beta:1"));
  await symlink(join(tmp, "elsewhere"), join(tree, "more"));
  controller = await start();
  await waitFor("alpha made", async () => (await api(cp.url).deployments()).some((d) => d.name === "alpha"));
  expect((await api(cp.url).deployments()).map((d) => d.name)).toEqual(["alpha"]);
});
