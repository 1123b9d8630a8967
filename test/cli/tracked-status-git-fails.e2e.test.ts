import { execFileSync } from "node:child_process";
import { chownSync } from "node:fs";
import { cp as copy, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { runInProcess } from "../support/in-process-cli.js";
import { api } from "../controller/support.js";
import { plain } from "./two-planes.js";

// A record git tracks is not trusted as plumb's own (tracked-status.e2e.test.ts): a committed one
// naming a deployment plumb never made had apply --prune delete it. That check asked git, and when
// git failed (not installed, "detected dubious ownership", a broken .git) it took nothing as
// tracked: it failed open, and the committed record was trusted again. Inside a repository git must
// now answer, or the command stops (status-tracking-unknown) before sending anything; outside one
// nothing can be tracked and git is not needed. Counted on the control plane: the deployment only
// the committed record names stays. plumb runs in the test's process (runInProcess), the broken git setting in its environment for
// the call (the git it starts inherits it).

let cp: RunningControlPlane;
const dirs: string[] = [];
beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterAll(async () => {
  await cp?.stop();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], { cwd });
const env = { PLUMB_API_URL: "", PLUMB_API_KEY: DEFAULT_API_KEY };
const apply = (path: string, extra: Record<string, string> = {}) =>
  runInProcess(["apply", path, "--yes", "--no-wait", "--prune"], { ...env, PLUMB_API_URL: cp.url, ...extra });
const names = async () => (await api(cp.url).deployments()).map((d) => d.name).sort();

/**
 * A repository whose commit holds `.plumb/status/` with a forged record for `victim` (a deployment
 * made by hand, never by plumb), cloned afresh: the clone's store holds only committed records.
 */
async function cloneWithForgedRecord(name: string): Promise<{ clone: string; store: string }> {
  const repo = await mkdtemp(join(tmpdir(), `plumb-tracked-${name}-`));
  dirs.push(repo);
  git(repo, "init", "-q");
  await writeFile(join(repo, `${name}.yaml`), plain(name));
  expect((await apply(repo)).code).toBe(0);
  const victim = await api(cp.url).call<{ id: string }>("POST", "/v2/deployments", {
    name: `victim-${name}`,
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: "img/victim:1" },
    secrets: [],
  });
  const store = join(repo, ".plumb", "status");
  const own = JSON.parse(await readFile(join(store, `deployment.${name}.json`), "utf8")) as object;
  const forged = { ...own, name: `victim-${name}`, id: victim.id, manifest_file: "victim.yaml" };
  await writeFile(join(store, `deployment.victim-${name}.json`), JSON.stringify(forged));
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "manifests and .plumb/");
  const clone = `${repo}-clone`;
  dirs.push(clone);
  git(tmpdir(), "clone", "-q", repo, clone);
  return { clone, store: join(clone, ".plumb", "status") };
}

const refusedAndKept = async (name: string, run: { code: number | null; output: string }, store: string) => {
  expect(await names()).toContain(`victim-${name}`);
  expect(run.output).toContain("status-tracking-unknown");
  expect(run.output).toContain(store);
  expect(run.output).toContain("--status-dir");
  expect(run.code, run.output).toBe(1);
};

it("git not installed: apply --prune in a repository stops, the deployment only a committed record names stays", async () => {
  const { clone, store } = await cloneWithForgedRecord("nogit");
  const run = await apply(clone, { PATH: "/nonexistent-plumb-bin" });
  expect(run.output).toContain("git is not installed");
  await refusedAndKept("nogit", run, store);
}, 60_000);

it("git pointed at a repository that is not there (GIT_DIR): stops, nothing deleted", async () => {
  const { clone, store } = await cloneWithForgedRecord("gitdir");
  await refusedAndKept("gitdir", await apply(clone, { GIT_DIR: join(clone, "no-such-git-dir") }), store);
}, 60_000);

it("a broken .git: stops, nothing deleted", async () => {
  const { clone, store } = await cloneWithForgedRecord("broken");
  await writeFile(join(clone, ".git", "HEAD"), "not a ref\n");
  await refusedAndKept("broken", await apply(clone), store);
}, 60_000);

it.runIf(process.getuid?.() === 0)(
  "as root in a checkout another user owns ('dubious ownership'): stops, nothing deleted",
  async () => {
    const { clone, store } = await cloneWithForgedRecord("owner");
    // git refuses a repository owned by someone else (safe.directory): chown -R to another uid.
    execFileSync("chown", ["-R", "12345:12345", clone]);
    const run = await apply(clone);
    expect(run.output).toContain("dubious ownership");
    await refusedAndKept("owner", run, store);
    chownSync(clone, 0, 0);
  },
  60_000,
);

it("outside a repository no git is needed: the records are plumb's own, apply runs without git", async () => {
  const repo = await mkdtemp(join(tmpdir(), "plumb-untracked-"));
  dirs.push(repo);
  await writeFile(join(repo, "plain.yaml"), plain("plain-outside"));
  expect((await apply(repo)).code).toBe(0);
  const copied = `${repo}-copy`;
  dirs.push(copied);
  await copy(repo, copied, { recursive: true });
  await writeFile(join(copied, "plain.yaml"), plain("plain-outside").replace(":1", ":2"));
  const run = await apply(copied, { PATH: "/nonexistent-plumb-bin" });
  expect(run.output).not.toContain("status-tracking-unknown");
  expect(run.code, run.output).toBe(0);

  // Nor is git started at all there: every command it would run could only fail (a process each).
  const bin = join(repo, "bin");
  await writeFile(join(repo, "bin-git"), `#!/bin/sh\necho "$*" >> ${join(repo, "git-calls")}\nexit 128\n`, {
    mode: 0o755,
  });
  execFileSync("mkdir", ["-p", bin]);
  execFileSync("ln", ["-s", join(repo, "bin-git"), join(bin, "git")]);
  await writeFile(join(copied, "plain.yaml"), plain("plain-outside").replace(":1", ":3"));
  const path = `${bin}:${process.env.PATH ?? ""}`;
  for (const args of [
    ["apply", copied, "--yes", "--no-wait", "--prune"],
    ["plan", copied, "-o", "markdown"],
    ["status", copied],
  ]) {
    const ran = await runInProcess(args, {
      PLUMB_API_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
      PATH: path,
    });
    expect(ran.code, ran.output).toBe(0);
  }
  await expect(readFile(join(repo, "git-calls"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
}, 60_000);
