import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt } from "../support/built-cli.js";
import { copyFlatExample } from "../support/flat-example.js";
import { type ActionFile, readAction, runAction } from "./action-runner.js";
import { type GitHubStub, startGitHubStub } from "./github-stub.js";

// action.yml, run step by step as GitHub would, with the built plumb against the local control
// plane and GitHub's REST API stood in for on loopback: a pull request gets one plan comment
// (edited in place on the next push) and sends nothing; the merge applies exactly the saved plan
// and comments the result; an invalid manifest is annotated and fails the job.

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const repository = "acme/agents";
const pr = { number: 7, headSha: "a".repeat(40) };
let action: ActionFile;
let controlPlane: RunningControlPlane;
let github: GitHubStub;
let root: string;
let workspace: string;

beforeAll(async () => {
  assertBuilt();
  action = await readAction("action.yml");
  controlPlane = await startControlPlane({
    port: 0,
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    runSeconds: 0,
  });
  github = await startGitHubStub(repository, pr);
  root = await mkdtemp(join(tmpdir(), "plumb-action-"));
  workspace = join(root, "workspace");
  await mkdir(join(root, "home"));
  // The repository of manifests, cloned from its origin as actions/checkout leaves it.
  await git(root, "init", "-q", "--bare", "-b", "main", "origin.git");
  await git(root, "clone", "-q", "origin.git", "workspace");
  await copyFlatExample("saas", join(workspace, "deployments"));
  await git(workspace, "add", "-A");
  await git(
    workspace,
    "-c",
    "user.name=dev",
    "-c",
    "user.email=dev@example.com",
    "commit",
    "-q",
    "-m",
    "agents",
  );
  await git(workspace, "push", "-q", "origin", "HEAD:main");
}, 180_000);
afterAll(async () => {
  await github?.close();
  await controlPlane?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const gitEnv = () => ({ ...process.env, HOME: join(root, "home"), GIT_CONFIG_NOSYSTEM: "1" });
const git = (cwd: string, ...args: string[]) => run("git", args, { cwd, env: gitEnv() });

async function runOn(event: "pull_request" | "push") {
  const temp = await mkdtemp(join(root, "runner-"));
  const eventPath = join(temp, "event.json");
  await writeFile(
    eventPath,
    JSON.stringify(
      event === "pull_request" ? { pull_request: { number: pr.number, head: { sha: pr.headSha } } } : {},
    ),
  );
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(PLUMB_|GITHUB_)/.test(k)),
  );
  return runAction(action, {
    // Pinned as the example workflow pins it: the key goes to the control plane's origin only.
    inputs: {
      "api-url": controlPlane.url,
      "api-key": DEFAULT_API_KEY,
      "allowed-api-origins": controlPlane.url,
    },
    github: { token: "ghs_test-token", "event.pull_request.head.sha": pr.headSha },
    env: {
      ...(inherited as Record<string, string>),
      HOME: join(root, "home"),
      GIT_CONFIG_NOSYSTEM: "1",
      NO_COLOR: "1",
      OPENAI_API_KEY: "sk-test", // the job's env, as the example workflow sets it from a secret
      GITHUB_ACTION_PATH: process.cwd(),
      GITHUB_WORKSPACE: workspace,
      GITHUB_REPOSITORY: repository,
      GITHUB_API_URL: github.url,
      GITHUB_EVENT_NAME: event,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_SHA: event === "push" ? "b".repeat(40) : pr.headSha,
      RUNNER_TEMP: temp,
    },
  });
}

const liveDeployments = async () => {
  const res = await fetch(`${controlPlane.url}/v2/deployments`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  return ((await res.json()) as { resources: Array<{ name: string }> }).resources.map((d) => d.name).sort();
};

describe("action.yml", () => {
  it("passes @action-validator/cli, as does the example workflow that uses it", async () => {
    const cli = require.resolve("@action-validator/cli/cli.mjs");
    const validate = (file: string) =>
      run(process.execPath, [cli, file]).then(
        () => "valid",
        (error: { stdout?: string; message: string }) => error.stdout || error.message,
      );
    for (const file of ["action.yml", "examples/ci/github-action/plumb.yml"])
      expect(await validate(file), file).toBe("valid");
    // It reads composite actions for real: a run step without its shell is refused.
    const broken = join(root, "broken", "action.yml");
    await mkdir(join(root, "broken"));
    await writeFile(broken, (await readFile("action.yml", "utf8")).replace(/^ {6}shell: bash\n/m, ""));
    expect(await validate(broken)).toContain("shell");
    const workflow = await readFile("examples/ci/github-action/plumb.yml", "utf8");
    expect(workflow).toMatch(/uses: acme\/plumb@/);
  });

  it("on a pull request: one plan comment, edited in place on the next push; nothing sent", async () => {
    github.comments.push({ id: 1, body: "a reviewer's comment" });
    const first = await runOn("pull_request");
    expect(first.code, first.log).toBe(0);
    expect(first.outputs.plumb).toMatchObject({ command: "plan", exit: "0" });
    const plan = github.comments.filter((c) => c.body.startsWith("<!-- plumb plan -->\n"));
    expect(plan).toHaveLength(1);
    expect(plan[0]!.body).toContain("### plumb plan");
    expect(plan[0]!.body).toContain("triage-agent");
    expect(await liveDeployments()).toEqual([]);
    // The saved plan is what upload-artifact keeps, under the head commit's name.
    const upload = first.skipped.find((s) => s.uses.startsWith("actions/upload-artifact@"))!;
    expect(upload.if).toBe("steps.plumb.outputs.command == 'plan' && steps.plumb.outputs.exit == '0'");
    expect(upload.with.name).toBe(`plumb-plan-${pr.headSha}`);
    expect(upload.with.path).toBe(first.outputs.plumb!["plan-file"]);
    const saved = await readFile(upload.with.path!);
    expect(first.skipped.map((s) => s.uses.split("@")[0])).toEqual([
      "actions/setup-node",
      "actions/upload-artifact",
    ]);

    const second = await runOn("pull_request");
    expect(second.code, second.log).toBe(0);
    const writes = github.requests.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);
    expect(writes).toEqual([
      `POST /repos/${repository}/issues/7/comments`,
      `PATCH /repos/${repository}/issues/comments/${plan[0]!.id}`,
    ]);
    expect(github.comments[0]).toEqual({ id: 1, body: "a reviewer's comment" });
    expect(github.requests.every((r) => r.authorization === "Bearer ghs_test-token")).toBe(true);

    // After the merge: the artifact of the pull request's head commit is applied, and commented.
    github.setArtifact(`plumb-plan-${pr.headSha}`, { name: "plan.json", bytes: saved });
    const merged = await runOn("push");
    expect(merged.code, merged.log).toBe(0);
    expect(merged.outputs.plumb).toMatchObject({ command: "apply", exit: "0" });
    expect(await liveDeployments()).toEqual([
      "docs-agent",
      "research-agent",
      "support-agent",
      "triage-agent",
    ]);
    const applied = github.comments.filter((c) => c.body.startsWith("<!-- plumb apply -->\n"));
    expect(applied).toHaveLength(1);
    expect(applied[0]!.body).toContain("converged");
    // The token went to GitHub, never to the storage the artifact's URL redirects to.
    const storage = github.requests.filter((r) => r.path.startsWith("/storage/"));
    expect(storage.map((r) => r.authorization)).toEqual([undefined]);
    const { stdout } = await git(workspace, "ls-remote", "origin", "plumb-status");
    expect(stdout).toMatch(/refs\/heads\/plumb-status/);
  }, 300_000);

  it("an invalid manifest: annotated on its line, shown in the plan comment, and the job fails", async () => {
    await writeFile(
      join(workspace, "deployments", "broken.yaml"),
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: Broken}\nspek: {}\n",
    );
    const result = await runOn("pull_request");
    expect(result.code, result.log).toBe(1);
    expect(result.outputs.plumb).toMatchObject({ command: "plan", exit: "1" });
    expect(result.log).toMatch(/::error file=deployments\/broken\.yaml,line=\d+/);
    expect(result.log).toContain("::error::plumb plan exited 1");
    const plan = github.comments.filter((c) => c.body.startsWith("<!-- plumb plan -->\n"));
    expect(plan).toHaveLength(1);
    expect(plan[0]!.body).toContain("broken.yaml");
    await rm(join(workspace, "deployments", "broken.yaml"));
  }, 120_000);
});
