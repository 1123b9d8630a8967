import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { openManifestSource } from "../../src/controller/source/manifest-source.js";
import type { PlumbError } from "../../src/errors.js";
import { loadStatusFromBranch } from "../../src/git/records/load-status-branch.js";
import { type GitHttpServer, startGitHttpServer } from "../controller/git-http-server.js";
import { container, memoryLogger, writeDoc } from "../controller/support.js";
import { runInProcess } from "../support/in-process-cli.js";

// A process's argv is every user's to read (`ps`, /proc/PID/cmdline). A `git` first on PATH records
// the argv of every git plumb starts, and (GIT_TRACE, which git's children inherit) of every process
// those start: `git remote-http NAME URL` holds the remote's whole URL, wherever it came from. A git
// token in a URL reaches one of them unless plumb takes it out first.

const exec = promisify(execFile);
const USER = "gitlab-ci-token";
const TOKEN = "glcbt-argv-canary-0123456789abcdef";

let root: string;
let server: GitHttpServer | undefined;
let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await server?.close();
  await cp?.stop();
  server = cp = undefined;
  await rm(root, { recursive: true, force: true });
});

/** A git wrapper in `root/bin` logging to `root/argv.log`; PATH with it first. */
async function gitWrapper(): Promise<{ path: string; log: () => Promise<string> }> {
  const bin = join(root, "bin");
  const log = join(root, "argv.log");
  await mkdir(bin);
  const real = (await exec("sh", ["-c", "command -v git"])).stdout.trim();
  const script = `#!/bin/sh\nprintf 'argv: %s\\n' "$*" >> '${log}'\nGIT_TRACE='${log}' exec '${real}' "$@"\n`;
  await writeFile(join(bin, "git"), script);
  await chmod(join(bin, "git"), 0o755);
  await writeFile(log, "");
  return { path: `${bin}${delimiter}${process.env.PATH}`, log: () => readFile(log, "utf8") };
}

/** served/PATH.git (bare) with one manifest on main. */
async function servedRepo(path: string): Promise<void> {
  const bare = join(root, "served", path);
  await exec("git", ["init", "-q", "--bare", "--initial-branch=main", bare]);
  const seed = join(root, "seed", path);
  await writeDoc(seed, "agent.yaml", container("agent", "img/agent:1"));
  await exec("git", ["init", "-q", "--initial-branch=main"], { cwd: seed });
  await exec("git", ["add", "."], { cwd: seed });
  await exec("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"], { cwd: seed });
  await exec("git", ["push", "-q", bare, "main"], { cwd: seed });
}

describe("git tokens never reach a process's argv", () => {
  it("a status branch remote with user:token in its URL (GitLab CI's checkout): apply works, no argv holds the token", async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-git-argv-"));
    await servedRepo("deployments.git");
    server = await startGitHttpServer(join(root, "served"), USER, TOKEN);
    cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
    const work = join(root, "work");
    const remote = `${server.url.replace("//", `//${USER}:${TOKEN}@`)}/deployments.git`;
    await exec("git", ["clone", "-q", remote, work], { env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
    const git = await gitWrapper();
    const env = { PATH: git.path, HOME: root, PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
    const applied = await runInProcess(["apply", work, "--yes", "--status-branch", "plumb-status"], env);
    expect(applied.code, applied.output).toBe(0);
    expect(applied.output).toContain("Status committed to branch plumb-status");
    const seen = await git.log();
    // Not vacuous: the lease's, the clone's and the push's argv, and git-remote-http's, were seen.
    expect(seen).toMatch(/argv: (fetch|ls-remote) /);
    expect(seen).toMatch(/argv: push /);
    expect(seen).toMatch(/remote-http /);
    expect(seen).not.toContain(TOKEN);
    expect(seen).not.toContain(encodeURIComponent(TOKEN));
    const pushed = await exec("git", ["ls-remote", join(root, "served", "deployments.git"), "plumb-status"]);
    expect(pushed.stdout).toContain("refs/heads/plumb-status");
  }, 60_000);

  it("a token as the remote's user name (https://TOKEN@host/…) is x-access-token's password, never in argv", async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-git-argv-"));
    await servedRepo("deployments.git");
    server = await startGitHttpServer(join(root, "served"), "x-access-token", TOKEN);
    const work = join(root, "work");
    const at = (userinfo: string) => `${server!.url.replace("//", `//${userinfo}@`)}/deployments.git`;
    await exec("git", ["clone", "-q", at(`x-access-token:${TOKEN}`), work]);
    // git's own password prompt would name it (`Password for 'http://TOKEN@host': `, the askpass's argv)
    await exec("git", ["-C", work, "remote", "set-url", "origin", at(TOKEN)]);
    const git = await gitWrapper();
    vi.stubEnv("PATH", git.path);
    vi.stubEnv("HOME", root);
    try {
      // The branch is read over the network (a fetch): with no credentials that is a 401, a failure.
      const store = await loadStatusFromBranch({ root: work, branch: "plumb-status" });
      expect(store.objects.size).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }
    const seen = await git.log();
    expect(seen).toMatch(/remote-http /);
    expect(seen).not.toContain(TOKEN);
    expect(server.requests.denied).toBeGreaterThan(0); // asked first, then answered by the askpass
  }, 60_000);

  it("with PLUMB_GIT_TOKEN (the GitLab example's push token), it is given in place of the remote's own, neither in argv", async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-git-argv-"));
    await servedRepo("deployments.git");
    server = await startGitHttpServer(join(root, "served"), "oauth2", TOKEN);
    const work = join(root, "work");
    const at = (userinfo: string) => `${server!.url.replace("//", `//${userinfo}@`)}/deployments.git`;
    await exec("git", ["clone", "-q", at(`oauth2:${TOKEN}`), work]);
    // As GitLab Runner leaves the checkout: the job's own token (it cannot push) in origin's URL.
    const jobToken = "glcbt-job-token-fedcba9876543210";
    await exec("git", ["-C", work, "remote", "set-url", "origin", at(`gitlab-ci-token:${jobToken}`)]);
    const git = await gitWrapper();
    for (const [name, value] of Object.entries({
      PATH: git.path,
      HOME: root,
      PLUMB_GIT_USERNAME: "oauth2",
      PLUMB_GIT_TOKEN: TOKEN,
    }))
      vi.stubEnv(name, value);
    try {
      const store = await loadStatusFromBranch({ root: work, branch: "plumb-status" });
      expect(store.objects.size).toBe(0);
    } finally {
      vi.unstubAllEnvs();
    }
    const seen = await git.log();
    expect(seen).toMatch(/remote-http /);
    for (const secret of [TOKEN, jobToken]) expect(seen).not.toContain(secret);
  }, 60_000);

  it("the controller refuses a --repo with a token in its path or query before any git runs", async () => {
    root = await mkdtemp(join(tmpdir(), "plumb-git-argv-"));
    // A server that would serve the path-token URL: /x-access-token/TOKEN/deployments.git exists.
    await servedRepo(`x-access-token/${TOKEN}/deployments.git`);
    server = await startGitHttpServer(join(root, "served"), USER, "askpass-token-0123");
    const git = await gitWrapper();
    const env = {
      PATH: git.path,
      HOME: root,
      PLUMB_GIT_USERNAME: USER,
      PLUMB_GIT_TOKEN: "askpass-token-0123",
    };
    for (const url of [
      `${server.url}/x-access-token/${TOKEN}/deployments.git`,
      `${server.url}/deployments.git?access_token=${TOKEN}`,
    ]) {
      const log = memoryLogger();
      const workDir = join(root, "checkout");
      const source = { kind: "git" as const, url, branch: "main", workDir, intervalMs: 60_000 };
      const error = await openManifestSource(source, env, log.logger).then(
        async (opened) => {
          await opened.close();
          return undefined;
        },
        (e: unknown) => e as PlumbError,
      );
      // Accepted, the path-token URL was cloned: the token in git's argv and in .git/config.
      const config = await readFile(join(workDir, ".git", "config"), "utf8").catch(() => "");
      expect(config, url).not.toContain(TOKEN);
      expect(await git.log(), url).not.toContain(TOKEN);
      expect(error?.code, url).toBe("invalid-setting");
      expect(error?.message).toContain("PLUMB_GIT_TOKEN");
      expect(`${error?.message} ${log.text()}`).not.toContain(TOKEN);
      await rm(workDir, { recursive: true, force: true });
    }
    // The fix it names: the URL without the token, PLUMB_GIT_TOKEN through the askpass, in no argv
    // (the askpass's prompts are in git's trace) and no file of the checkout.
    await servedRepo("deployments.git");
    const workDir = join(root, "checkout");
    const url = `${server.url}/deployments.git`;
    const source = { kind: "git" as const, url, branch: "main", workDir, intervalMs: 60_000 };
    const opened = await openManifestSource(source, env, memoryLogger().logger);
    try {
      await opened.fetch!();
    } finally {
      await opened.close();
    }
    const seen = await git.log();
    expect(seen).toMatch(/askpass/);
    expect(seen).not.toContain(env.PLUMB_GIT_TOKEN);
    const files = await exec("grep", ["-rl", env.PLUMB_GIT_TOKEN, workDir]).catch(() => ({ stdout: "" }));
    expect(files.stdout).toBe("");
  }, 60_000);
});
