import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ControllerSource, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { type GitHttpServer, startGitHttpServer } from "./git-http-server.js";
import { container, memoryLogger, waitFor, writeDoc } from "./support.js";

// --status-branch in git mode: the status is pushed to the manifest repository with the same
// credentials as the fetches (a token-protected HTTP remote), and read back from it on a fresh start.

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd });
const TOKEN = "ghp_status-branch-token";

let tmp: string;
let bare: string;
let cp: RunningControlPlane;
let server: GitHttpServer | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-ctl-status-"));
  bare = join(tmp, "repos", "manifests.git");
  const work = join(tmp, "work");
  await run("git", ["init", "--bare", "-b", "main", bare]);
  await run("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await git(work, "add", ".");
  await git(work, "commit", "-m", "first");
  await git(work, "push", "origin", "main");
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await cp.stop();
  await rm(tmp, { recursive: true, force: true });
});

async function runOnce(url: string, workDir: string, env: NodeJS.ProcessEnv) {
  const log = memoryLogger();
  const source: ControllerSource = {
    kind: "git",
    url,
    branch: "main",
    path: "deploy",
    workDir,
    intervalMs: 3_600_000,
  };
  const controller = await startController({
    source,
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    statusBranch: "plumb-status",
    selfHeal: false,
    concurrency: 2,
    debounceMs: 10,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env,
    logger: log.logger,
  });
  const atStart = controller.status().objects.map((o) => [o.name, o.sync]);
  await waitFor("ready", () => controller.ready());
  await controller.stop(1_000); // publishes the status branch
  return { log, atStart };
}

const branchFiles = async () =>
  (await run("git", ["--git-dir", bare, "ls-tree", "-r", "--name-only", "plumb-status"])).stdout.trim();

describe("controller --status-branch following a git remote", () => {
  it("pushes status to a file remote", async () => {
    const { log } = await runOnce(bare, join(tmp, "checkout"), { PATH: process.env.PATH, HOME: tmp });
    expect(await branchFiles()).toBe("deploy/.plumb/status/deployment.alpha.json");
    expect(log.text()).not.toContain("status branch not published");
  });

  it("pushes to and reads from a token-protected HTTP remote with the fetch credentials, never logging the token", async () => {
    server = await startGitHttpServer(join(tmp, "repos"), "x-access-token", TOKEN);
    const url = `${server.url}/manifests.git`;
    const env = { PATH: process.env.PATH, HOME: tmp, PLUMB_GIT_TOKEN: TOKEN };

    const first = await runOnce(url, join(tmp, "checkout-1"), env);
    expect(first.log.text()).not.toContain("status branch not published");
    expect(await branchFiles()).toBe("deploy/.plumb/status/deployment.alpha.json");

    // A fresh checkout (new pod, empty status directory) reads the records back from the branch.
    const second = await runOnce(url, join(tmp, "checkout-2"), env);
    expect(second.atStart).toEqual([["alpha", "Synced"]]);
    for (const { log } of [first, second]) expect(log.text()).not.toContain(TOKEN);
    expect(server.requests.denied).toBeGreaterThan(0); // git asked without credentials first: auth was real
  });
});
