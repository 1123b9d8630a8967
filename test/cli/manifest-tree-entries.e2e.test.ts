import { execFileSync, spawn } from "node:child_process";
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { containerManifest } from "../support/manifest-text.js";

// A manifest tree with what is not a readable regular file in it, as the built CLI meets it with a
// real control plane. A FIFO named *.yaml blocked apply, drift and status for ever (the quick scan
// for Environment documents opened it to read); now each command ends and validate names it. A
// file or directory plumb may not read ended the whole command ("permission denied [io-error]",
// nothing else said); now each is a manifest-unreadable error naming it, the rest is checked, and
// an error stops --prune, to which the unreadable objects would look removed. Not readable for real:
// as root (whom permissions do not stop) the CLI runs as another user (uid 65534).

const KEY = "tree-entries-key-0123456789";
const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
const ROOT = process.getuid?.() === 0;
const OTHER = 65534;
let plane: RunningControlPlane;
let dir: string;
/** A node uid OTHER can run (npx's node may live under /root, mode 0700): this one, or a copy. */
let node = process.execPath;

const deployment = containerManifest;
const env = () => ({ PLUMB_API_URL: plane.url, PLUMB_API_KEY: KEY, NO_COLOR: "1" });

/** The built CLI run to its end, or killed after 20 s (an open that blocks never ends). */
async function plumb(args: string[]) {
  const run = spawnCli(args, env());
  const timer = setTimeout(() => run.child.kill("SIGKILL"), 20_000);
  const code = await run.exited.finally(() => clearTimeout(timer));
  return { code, output: run.output(), killed: run.child.signalCode === "SIGKILL" };
}

/** The built CLI as a user whom permissions stop (another one when this one is root). */
function plumbAsOther(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(node, [MAIN, ...args], {
    env: { PATH: process.env.PATH, HOME: dir, ...env() },
    stdio: ["ignore", "pipe", "pipe"],
    ...(ROOT ? { uid: OTHER, gid: OTHER } : {}),
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((done, fail) => {
    child.once("error", fail);
    child.once("exit", (code) => done({ code, output }));
  });
}

async function nodeForOther(): Promise<string> {
  try {
    execFileSync(process.execPath, ["-e", ""], { uid: OTHER, gid: OTHER, stdio: "ignore" });
    return process.execPath;
  } catch {
    const copy = await mkdtemp(join(tmpdir(), "plumb-node-"));
    await chmod(copy, 0o755);
    await copyFile(process.execPath, join(copy, "node"));
    await chmod(join(copy, "node"), 0o755);
    return join(copy, "node");
  }
}

beforeAll(async () => {
  assertBuilt();
  if (ROOT) node = await nodeForOther();
  plane = await startControlPlane({
    apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }],
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
  });
});
afterAll(async () => {
  await plane?.stop();
  if (node !== process.execPath) await rm(join(node, ".."), { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-tree-entries-"));
});
afterEach(async () => {
  execFileSync("chmod", ["-R", "u+rwX", dir]);
  await rm(dir, { recursive: true, force: true });
});

it("a FIFO named *.yaml: validate warns naming it; apply, drift and status end instead of blocking", async () => {
  await writeFile(join(dir, "agent.yaml"), deployment("fifo-tree-agent"));
  await mkdir(join(dir, "team"));
  execFileSync("mkfifo", [join(dir, "team", "pipe.yaml")]);
  const validate = await plumb(["validate", dir]);
  expect(validate.output).toContain(
    "team/pipe.yaml:1:1: warning: a FIFO (named pipe), not a regular file: skipped, not read; a manifest must be a regular file [not-regular-file]",
  );
  expect(validate.code).toBe(0);
  for (const args of [
    ["apply", dir, "--yes"],
    ["drift", dir],
    ["status", dir],
  ]) {
    const run = await plumb(args);
    expect(run.killed, `${args[0]}: ${run.output}`).toBe(false);
    expect(run.code, `${args[0]}: ${run.output}`).toBe(0);
  }
  expect((await api(plane.url, KEY).deployment("fifo-tree-agent")).name).toBe("fifo-tree-agent");
}, 90_000);

/** `path` made unreadable for the user plumbAsOther runs as, and the tree theirs otherwise. */
const unreadable = async (path: string) => {
  if (ROOT) execFileSync("chown", ["-R", `${OTHER}:${OTHER}`, dir]);
  await chmod(path, 0o000);
  if (ROOT) execFileSync("chown", ["root:root", path]);
};

it("an unreadable file or directory is an error naming it; the rest is validated", async () => {
  await writeFile(join(dir, "agent.yaml"), deployment("readable-agent"));
  await writeFile(join(dir, "locked.yaml"), deployment("locked-agent"));
  await mkdir(join(dir, "private"));
  await writeFile(join(dir, "private", "b.yaml"), deployment("private-agent"));
  await unreadable(join(dir, "locked.yaml"));
  await unreadable(join(dir, "private"));
  const run = await plumbAsOther(["validate", dir]);
  expect(run.output).toContain(
    "locked.yaml:1:1: error: file cannot be read: permission denied (EACCES): its manifests are not loaded; check its permissions [manifest-unreadable]",
  );
  expect(run.output).toContain(
    "private:1:1: error: directory cannot be read: permission denied (EACCES): its manifests are not loaded; check its permissions [manifest-unreadable]",
  );
  expect(run.output).toContain("1 valid manifest, 2 errors");
  expect(run.code).toBe(1);
}, 60_000);

it("apply --prune with a directory it cannot read deletes nothing: its objects are not judged removed", async () => {
  await writeFile(join(dir, "agent.yaml"), deployment("kept-agent"));
  await mkdir(join(dir, "private"));
  await writeFile(join(dir, "private", "b.yaml"), deployment("hidden-agent"));
  const first = await plumb(["apply", dir, "--yes", "--no-wait"]);
  expect(first.code, first.output).toBe(0);
  await unreadable(join(dir, "private"));
  const run = await plumbAsOther(["apply", dir, "--yes", "--prune", "--no-wait"]);
  expect(run.output).toContain("[manifest-unreadable]");
  expect(run.code).toBe(1);
  expect((await api(plane.url, KEY).deployment("hidden-agent")).name).toBe("hidden-agent");
}, 60_000);

it("PATH a FIFO or a symlink loop: validate, plan and apply say which at once, and write nothing", async () => {
  execFileSync("mkfifo", [join(dir, "pipe.yaml")]);
  await symlink("loop.yaml", join(dir, "loop.yaml"));
  for (const command of ["validate", "plan", "apply"]) {
    const fifo = await plumb([command, join(dir, "pipe.yaml"), ...(command === "apply" ? ["--yes"] : [])]);
    expect(fifo.killed, `${command}: ${fifo.output}`).toBe(false);
    expect(fifo.output).toContain(
      `manifest path ${join(dir, "pipe.yaml")} is a FIFO (named pipe), not a directory or a regular file; give the manifests' directory or file [path-unreadable]`,
    );
    const loop = await plumb([command, join(dir, "loop.yaml")]);
    expect(loop.output).toContain(
      `manifest path ${join(dir, "loop.yaml")} is a symlink loop (ELOOP): it never reaches a file or a directory; point it at the manifests [path-unreadable]`,
    );
    expect([fifo.code, loop.code]).toEqual([1, 1]);
  }
  expect((await readdir(dir)).sort()).toEqual(["loop.yaml", "pipe.yaml"]);
}, 120_000);

it("plan with a file of an internal_source directory it cannot read: that change is refused naming it, the rest planned", async () => {
  await writeFile(join(dir, "agent.yaml"), deployment("planned-agent"));
  await writeFile(
    join(dir, "sourced.yaml"),
    "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: sourced-agent}\nspec:\n  source: internal_source\n  source_path: src\n  source_revision_config: {graph_config_path: langgraph.json}\n",
  );
  await mkdir(join(dir, "src"));
  await writeFile(join(dir, "src", "langgraph.json"), "{}");
  await writeFile(join(dir, "src", "prompt.txt"), "be brief"); // not a manifest: the loader never opens it
  await unreadable(join(dir, "src", "prompt.txt"));
  const run = await plumbAsOther(["plan", dir]);
  expect(run.output).toContain(
    "sourced.yaml:6:3: source_path src/prompt.txt cannot be read: permission denied (EACCES); check its permissions",
  );
  expect(run.output).toContain("planned-agent");
  expect(run.output).not.toContain("[io-error]");
}, 60_000);
