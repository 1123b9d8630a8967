import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { type GitHttpServer, startGitHttpServer } from "../controller/git-http-server.js";
import { container, writeDoc } from "../controller/support.js";
import { runInProcess } from "../support/in-process-cli.js";
import { repoTemplate } from "../support/repo-template.js";

// --status-branch in CI: a git smart-HTTP server that requires authentication, and checkouts made
// the way actions/checkout makes them (no credentials in the URL; an http.<url>.extraheader in the
// checkout's own .git/config). The status branch's temporary clone must use those credentials.
// plumb runs in the test's process (runInProcess): nothing here kills or pauses it, and apply and
// plan write everything they say through process.stdout and process.stderr (no pino), all read.

const exec = promisify(execFile);
const USER = "x-access-token";
const TOKEN = "ghs_test-token-value-0123456789";
const header = (token: string) =>
  `AUTHORIZATION: basic ${Buffer.from(`${USER}:${token}`).toString("base64")}`;

let cp: RunningControlPlane;
let server: GitHttpServer;
let root: string;
let home: string;

afterAll(() => served.remove());
afterEach(async () => {
  await server?.close();
  await cp?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) =>
  exec("git", args, { cwd, env: { ...process.env, HOME: home, GIT_TERMINAL_PROMPT: "0" } });

/** served/deployments.git with the manifests on main, seeded once and copied per test (no server). */
const served = repoTemplate(async (dir) => {
  const bare = join(dir, "served", "deployments.git");
  await exec("git", ["init", "-q", "--bare", "--initial-branch=main", bare]);
  const seed = join(dir, "seed");
  await writeDoc(
    seed,
    "agent.yaml",
    container("agent", "img/agent:1", { secrets: [{ name: "TOKEN", valueFrom: { env: "AGENT_TOKEN" } }] }),
  );
  await exec("git", ["init", "-q", "--initial-branch=main"], { cwd: seed });
  await exec("git", ["add", "."], { cwd: seed });
  await exec("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "manifests"], {
    cwd: seed,
  });
  await exec("git", ["push", "-q", bare, "main"], { cwd: seed });
  await rm(seed, { recursive: true, force: true });
});

async function setup(options: { denyPush?: boolean; denyPushTo?: RegExp } = {}) {
  root = await mkdtemp(join(tmpdir(), "plumb-sb-auth-"));
  home = join(root, "home");
  await mkdir(home);
  await served.copyTo(root);
  const serverOptions: { denyPush: boolean; denyPushTo?: RegExp } = { denyPush: options.denyPush ?? false };
  if (options.denyPushTo) serverOptions.denyPushTo = options.denyPushTo;
  server = await startGitHttpServer(join(root, "served"), USER, TOKEN, serverOptions);
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
}
const url = () => `${server.url}/deployments.git`;

/** A checkout as actions/checkout leaves it: credentials only in its local config. */
async function checkout(name: string, token: string | null = TOKEN) {
  const dir = join(root, name);
  await git(root, "-c", `http.extraheader=${header(TOKEN)}`, "clone", "-q", url(), dir);
  if (token) await git(dir, "config", "--local", `http.${server.url}/.extraheader`, header(token));
  return dir;
}

const env = (extra: Record<string, string> = {}) => ({
  HOME: home,
  PLUMB_API_URL: cp.url,
  PLUMB_API_KEY: DEFAULT_API_KEY,
  AGENT_TOKEN: "agent-secret-1",
  ...extra,
});

describe("--status-branch with an authenticated remote", () => {
  it("apply pushes with the checkout's extraheader; a fresh checkout's plan reads the fingerprints", async () => {
    await setup();
    const work = await checkout("work");
    const applied = await runInProcess(["apply", work, "--yes", "--status-branch", "plumb-status"], env());
    expect(applied.code, applied.output).toBe(0);
    expect(applied.output).toContain("Status committed to branch plumb-status");
    expect(applied.output).not.toContain(TOKEN);

    const fresh = await checkout("fresh");
    const planned = await runInProcess(
      ["plan", fresh, "--status-branch", "plumb-status", "--detailed-exitcode"],
      env(),
    );
    expect(planned.code, planned.output).toBe(0); // secrets known from the branch: nothing to send
    expect(planned.output).not.toContain("unknown");
  }, 60_000);

  it("a credential helper in the checkout's config is used too", async () => {
    await setup();
    const work = await checkout("work", null);
    const store = join(root, "git-credentials");
    await writeFile(store, `http://${USER}:${TOKEN}@${new URL(server.url).host}\n`, { mode: 0o600 });
    await git(work, "config", "--local", "credential.helper", `store --file=${store}`);
    const applied = await runInProcess(["apply", work, "--yes", "--status-branch", "plumb-status"], env());
    expect(applied.code, applied.output).toBe(0);
    expect(applied.output).toContain("Status committed to branch plumb-status");
  }, 60_000);

  it("PLUMB_GIT_USERNAME / PLUMB_GIT_TOKEN work without any git config", async () => {
    await setup();
    const work = await checkout("work", null);
    const creds = { PLUMB_GIT_USERNAME: USER, PLUMB_GIT_TOKEN: TOKEN };
    const applied = await runInProcess(
      ["apply", work, "--yes", "--status-branch", "plumb-status"],
      env(creds),
    );
    expect(applied.code, applied.output).toBe(0);
    expect(applied.output).toContain("Status committed to branch plumb-status");
    expect(applied.output).not.toContain(TOKEN);
  }, 60_000);

  it("without credentials: status-branch-read-failed, exit 1, nothing applied, no prompt, no stack", async () => {
    await setup();
    const work = await checkout("work", null);
    const run = await runInProcess(["apply", work, "--yes", "--status-branch", "plumb-status"], env());
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain("[status-branch-read-failed]");
    expect(run.output).not.toMatch(/^\s+at /m);
    expect(run.output).not.toContain("Apply complete");
  }, 60_000);

  it("a token that cannot push: the lease cannot be taken, so nothing is sent (status-branch-push-failed)", async () => {
    await setup({ denyPush: true });
    const work = await checkout("work");
    const run = await runInProcess(["apply", work, "--yes", "--status-branch", "plumb-status"], env());
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain("[status-branch-push-failed]");
    expect(run.output).toContain("contents: write");
    expect(run.output).not.toContain(TOKEN);
    expect(run.output).not.toMatch(/^\s+at /m);
    const live = (await (
      await fetch(`${cp.url}/v2/deployments`, { headers: { "x-api-key": DEFAULT_API_KEY } })
    ).json()) as {
      resources: unknown[];
    };
    expect(live.resources).toEqual([]);
  }, 60_000);

  it("a push of the records that fails at the end: the apply is reported and kept locally", async () => {
    await setup({ denyPushTo: /refs\/heads\/plumb-status/ });
    const work = await checkout("work");
    const run = await runInProcess(["apply", work, "--yes", "--status-branch", "plumb-status"], env());
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain("Apply complete: 1 converged");
    expect(run.output).toContain("[status-branch-push-failed]");
    expect(run.output).not.toContain(TOKEN);
    expect(run.output).not.toMatch(/^\s+at /m);
    expect(existsSync(join(work, ".plumb", "status", "deployment.agent.json"))).toBe(true);
  }, 60_000);
});
