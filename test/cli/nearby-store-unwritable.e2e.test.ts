import { execFileSync, spawn } from "node:child_process";
import { chmod, chown, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { assertBuilt, runCli } from "../support/built-cli.js";
import { plain } from "./two-planes.js";

// A store nearby (above or below PATH) that is in use is locked too, so two applies never send the
// same change (nearby-locks.e2e.test.ts). One that exists but cannot be written made apply fail on
// its lock with a lock-io-error whose fix (--status-dir) would drop the nearby locks altogether,
// exit 1. Its lock is what says no one else is applying there, so nothing is sent; the error now
// names that store, says why, gives the fix, and exits 64 (a setting to fix). Not writable for real:
// as root (whom chmod does not stop) the built CLI runs as another user (uid 65534) over a tree it
// owns; as a user, the directory is made read-only. Counted on the control plane: no revision.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
const ROOT = process.getuid?.() === 0;
const OTHER = 65534;
let cp: RunningControlPlane;
let repo: string;
/** This runtime's node, where uid OTHER can run it (npx's node@24 lives under /root, mode 0700). */
let node = process.execPath;

/** A copy of this node in a directory anyone can read, when OTHER cannot run the one in place. */
async function nodeForOther(): Promise<string> {
  try {
    execFileSync(process.execPath, ["-e", ""], { uid: OTHER, gid: OTHER, stdio: "ignore" });
    return process.execPath;
  } catch {
    const dir = await mkdtemp(join(tmpdir(), "plumb-node-"));
    await chmod(dir, 0o755);
    await copyFile(process.execPath, join(dir, "node"));
    await chmod(join(dir, "node"), 0o755);
    return join(dir, "node");
  }
}

beforeAll(async () => {
  assertBuilt();
  if (ROOT) node = await nodeForOther();
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterAll(async () => {
  await cp?.stop();
  if (node !== process.execPath) await rm(join(node, ".."), { recursive: true, force: true });
});
afterEach(async () => {
  execFileSync("chmod", ["-R", "u+w", repo]);
  await rm(repo, { recursive: true, force: true });
});

const env = () => ({ PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY, NO_COLOR: "1" });

/** The built CLI, as another user when this one is root. */
function runAs(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(node, [MAIN, ...args], {
    env: { PATH: process.env.PATH, HOME: repo, ...env() },
    stdio: ["ignore", "pipe", "pipe"],
    ...(ROOT ? { uid: OTHER, gid: OTHER } : {}),
  });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((done, fail) => {
    child.once("error", fail); // could not start (EACCES): fail now, not at the test's timeout
    child.once("exit", (code) => done({ code, output }));
  });
}

/** A git tree with sub/a.yaml applied from `appliedFrom` (its store is then in use); a.yaml then changed. */
async function tree(name: string, appliedFrom: "sub" | "top"): Promise<{ sub: string }> {
  repo = await mkdtemp(join(tmpdir(), "plumb-unwritable-"));
  execFileSync("git", ["init", "-q", repo]);
  const sub = join(repo, "sub");
  await mkdir(sub);
  await writeFile(join(sub, "a.yaml"), plain(name));
  const first = await runCli(["apply", appliedFrom === "sub" ? sub : repo, "--yes", "--no-wait"], env());
  expect(first.code, first.output).toBe(0);
  const file = join(sub, "a.yaml");
  await writeFile(file, (await readFile(file, "utf8")).replace(":1", ":2"));
  if (ROOT) execFileSync("chown", ["-R", `${OTHER}:${OTHER}`, repo]);
  return { sub };
}

/** `dir` (a store's .plumb) made not writable for the user the CLI runs as. */
const readOnly = async (dir: string) => {
  await chmod(dir, 0o555);
  if (ROOT) await chown(dir, OTHER, OTHER);
};

const revisions = async (name: string) => {
  const client = api(cp.url);
  return (await client.revisions((await client.deployment(name)).id)).length;
};

const refused = (run: { code: number | null; output: string }, store: string) => {
  expect(run.output).toContain("[nearby-store-unwritable]");
  expect(run.output).toContain(`the status store ${store} is a store nearby`);
  expect(run.output).toContain("permission denied (EACCES)");
  expect(run.output).toContain("Fix: make");
  expect(run.output).not.toContain("held by");
  expect(run.output).not.toMatch(/\n\s+at /); // no stack
  expect(run.code, run.output).toBe(64);
};

it("apply of the tree, with the store below (sub's) not writable: refused, naming it, exit 64, nothing sent", async () => {
  const { sub } = await tree("unwritable-below", "sub");
  await readOnly(join(sub, ".plumb"));
  const run = await runAs(["apply", repo, "--yes", "--no-wait"]);
  expect(await revisions("unwritable-below")).toBe(1);
  refused(run, join(sub, ".plumb", "status"));
}, 60_000);

it("apply of a sub-directory, with the store above (the tree's) not writable: refused, naming it, exit 64, nothing sent", async () => {
  const { sub } = await tree("unwritable-above", "top");
  await readOnly(join(repo, ".plumb"));
  const run = await runAs(["apply", sub, "--yes", "--no-wait"]);
  expect(await revisions("unwritable-above")).toBe(1);
  refused(run, join(repo, ".plumb", "status"));
}, 60_000);

it("a controller on the tree, with the store below not writable: does not start, naming it, exit 64, nothing sent", async () => {
  const { sub } = await tree("unwritable-controller", "sub");
  await readOnly(join(sub, ".plumb"));
  const run = await runAs(["controller", "--dir", repo, "--listen", "127.0.0.1:0"]);
  expect(await revisions("unwritable-controller")).toBe(1);
  refused(run, join(sub, ".plumb", "status"));
}, 60_000);

it("apply with its own store not writable: store-unwritable, naming it, why and the fix, exit 64, nothing sent", async () => {
  const { sub } = await tree("unwritable-own", "sub");
  await readOnly(join(sub, ".plumb"));
  const run = await runAs(["apply", sub, "--yes", "--no-wait"]);
  expect(await revisions("unwritable-own")).toBe(1);
  expect(run.output).toContain("[store-unwritable]");
  expect(run.output).toContain(`the status store ${join(sub, ".plumb", "status")} is this command's own`);
  expect(run.output).toContain("permission denied (EACCES)");
  expect(run.output).toContain(`Fix: make ${join(sub, ".plumb")} writable for this user`);
  expect(run.output).not.toMatch(/\n\s+at /); // no stack
  expect(run.code, run.output).toBe(64);
}, 60_000);
