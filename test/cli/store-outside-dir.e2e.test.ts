import { mkdir, mkdtemp, readdir, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { runInProcess } from "../support/in-process-cli.js";
import { api, container, writeDoc } from "../controller/support.js";

// The commands that write a status store (apply, adopt; drift and status refreshing records) write
// the default one only inside the manifests' directory, as a --dir controller does
// (controller-dir-symlink.e2e.test.ts): a `.plumb` (or `.plumb/status`, or an environment's store in
// it) that is a symlink out of the directory, committed by anyone, had them write records and the
// lock wherever it led. Refused before the lock is taken (store-outside-dir); counted on the control
// plane: nothing sent. --status-dir names a store elsewhere on purpose.

let cp: RunningControlPlane;
let tmp: string;
let tree: string;
let outside: string;

beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterAll(() => cp.stop());
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-cli-store-link-"));
  tree = join(tmp, "tree");
  outside = join(tmp, "outside");
  await mkdir(outside, { recursive: true });
  await writeDoc(tree, "a.yaml", container("alpha", "img/alpha:1"));
});
afterEach(() => rm(tmp, { recursive: true, force: true }));

const plumb = (...args: string[]) =>
  runInProcess(args, { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY });

it.each([
  ["apply", [".plumb"]],
  ["apply", [".plumb", "status"]],
  ["drift", [".plumb"]],
  ["status", [".plumb", "status"]],
])(
  "%s with %j a symlink out of the directory: refused, nothing written outside, nothing sent",
  async (command, parts) => {
    await mkdir(join(tree, ...parts.slice(0, -1)), { recursive: true });
    await symlink(outside, join(tree, ...parts));
    const { code, output } = await plumb(command, tree);
    expect(output).toContain("[store-outside-dir]");
    expect(output).toContain(join(...parts));
    expect(output).toContain("--status-dir");
    expect(code).toBe(1);
    expect(await readdir(outside)).toEqual([]);
    expect(await api(cp.url).deployments()).toEqual([]);
  },
);

it("a link that stays inside is followed; --status-dir may name a store outside on purpose", async () => {
  await mkdir(join(tree, "state"), { recursive: true });
  await symlink(join(tree, "state"), join(tree, ".plumb"));
  expect((await plumb("apply", tree, "--yes")).code).toBe(0);
  expect(await readdir(join(tree, "state", "status"))).toContain("deployment.alpha.json");

  await rm(join(tree, ".plumb"));
  await mkdir(join(tree, ".plumb"));
  await symlink(outside, join(tree, ".plumb", "status"));
  const chosen = join(tmp, "chosen");
  const { code, output } = await plumb("apply", tree, "--yes", "--status-dir", chosen);
  expect(output).not.toContain("store-outside-dir");
  expect(code).toBe(0);
  expect(await readdir(chosen)).toContain("deployment.alpha.json");
  expect(await readdir(outside)).toEqual([]);
});
