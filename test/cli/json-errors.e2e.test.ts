import { execFile } from "node:child_process";
import { lookup } from "node:dns/promises";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt } from "../support/built-cli.js";
import { copyFlatExample } from "../support/flat-example.js";

// With -o json a failure prints one JSON document on stdout (code, message, fix, exit code): plan
// printed nothing there on an API error, so a script reading stdout had nothing to parse. And a
// host name that does not resolve is said to be one (it asked "is the server running?"). The built
// CLI against the real control plane, stdout read apart from stderr; no key is ever printed.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
const WRONG_KEY = "wrong-key-json-errors-0123456789";
let cp: RunningControlPlane;
let repo: string;
/** Two environments, a and b, on the one control plane (name suffixes apart), by A_/B_API_URL and _KEY. */
let envRepo: string;

type Run = { code: number | null; stdout: string; stderr: string };

function plumb(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      { env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 120_000 },
      (_error, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  assertBuilt();
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  repo = await mkdtemp(join(tmpdir(), "plumb-json-errors-"));
  await copyFlatExample("saas", repo);
  envRepo = await mkdtemp(join(tmpdir(), "plumb-json-errors-envs-"));
  for (const name of ["a", "b"]) {
    const upper = name.toUpperCase();
    await writeFile(
      join(envRepo, `env-${name}.yaml`),
      `apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: ${name}}\nspec:\n  api_url: {env: ${upper}_API_URL}\n  api_key: {env: ${upper}_API_KEY}\n  mode: saas\n  name_suffix: -${name}\n`,
    );
  }
  await writeFile(
    join(envRepo, "agent.yaml"),
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: agent}\nspec: {source: internal_container, source_revision_config: {image_uri: "img/agent:1"}}\n`,
  );
});
afterAll(async () => {
  await cp?.stop();
  await rm(repo, { recursive: true, force: true });
  await rm(envRepo, { recursive: true, force: true });
});

/** The one JSON document on stdout, its error. */
const errorOf = (run: Run) =>
  (JSON.parse(run.stdout) as { error: { code: string; message: string; fix: string; exit_code: number } })
    .error;

describe("-o json on a failure: one JSON document on stdout", () => {
  it.each([["plan"], ["drift"], ["status"], ["apply", "--yes"]])(
    "%s -o json refused by the API (401): the error as JSON, exit 1, no key",
    async (command, ...extra) => {
      const run = await plumb([command, repo, "-o", "json", ...extra], {
        PLUMB_API_URL: cp.url,
        PLUMB_API_KEY: WRONG_KEY,
      });
      expect(run.code).toBe(1);
      const error = errorOf(run);
      expect(error).toMatchObject({ code: "unauthorized", exit_code: 1 });
      expect(error.message).toContain("401");
      expect(error.fix).toBe("check PLUMB_API_KEY (or --api-key-file)");
      expect(run.stdout + run.stderr).not.toContain(WRONG_KEY);
      expect(run.stderr).toContain("[unauthorized]");
    },
  );

  it("validate -o json on a path that does not exist: the error as JSON, exit 1", async () => {
    const run = await plumb(["validate", join(repo, "nowhere"), "-o", "json"], {});
    expect(run.code).toBe(1);
    expect(errorOf(run)).toMatchObject({ code: "path-not-found", exit_code: 1 });
    expect(errorOf(run).fix).toContain("docs/troubleshooting.md");
  });

  it("a usage error with --output=json: the error as JSON, exit 64", async () => {
    const run = await plumb(["plan", repo, "--output=json", "--no-such-flag"], {});
    expect(run.code).toBe(64);
    expect(errorOf(run)).toMatchObject({ code: "usage", exit_code: 64 });
  });

  it("text output stays as it was: nothing on stdout for an error", async () => {
    const run = await plumb(["plan", repo], { PLUMB_API_URL: cp.url, PLUMB_API_KEY: WRONG_KEY });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
  });
});

describe("-o json over several environments: each failed one's error as a failed command's", () => {
  const envs = (b: Record<string, string>) => ({
    A_API_URL: cp.url,
    A_API_KEY: DEFAULT_API_KEY,
    B_API_URL: cp.url,
    ...b,
  });
  type Entry = { environment: string; error?: ReturnType<typeof errorOf>; results?: unknown[] };
  const entries = (run: Run) => (JSON.parse(run.stdout) as { environments: Entry[] }).environments;

  it("plan: the failed environment's entry has code, message, fix and exit_code (fix was left out)", async () => {
    const unset = await plumb(["plan", envRepo, "-o", "json"], envs({}));
    expect(unset.code).toBe(1);
    const [a, b] = entries(unset);
    expect(a).toMatchObject({ environment: "a" });
    expect(a!.error).toBeUndefined();
    expect(b!.error).toMatchObject({ code: "api-config", exit_code: 1 });
    expect(b!.error!.fix).toBe('see "api-config" in docs/troubleshooting.md (Error codes)');
    expect(b!.error!.message).toContain("reads B_API_KEY, which is not set");

    const refused = await plumb(["plan", envRepo, "-o", "json"], envs({ B_API_KEY: WRONG_KEY }));
    expect(refused.code).toBe(1);
    expect(entries(refused)[1]!.error).toMatchObject({
      code: "unauthorized",
      exit_code: 1,
      fix: "check environment b's spec.api_key ($B_API_KEY, env-b.yaml:6)",
    });
    expect(refused.stdout + refused.stderr).not.toContain(WRONG_KEY);
  });

  it("apply ending with an error in b: a's results stay in the document, with b's error (they were lost)", async () => {
    const run = await plumb(["apply", envRepo, "--yes", "-o", "json"], envs({}));
    expect(run.code).toBe(1);
    const [a, b] = entries(run);
    expect(a).toMatchObject({ environment: "a", results: [{ name: "agent-a", outcome: "converged" }] });
    expect(b).toEqual({
      environment: "b",
      error: expect.objectContaining({ code: "api-config", exit_code: 1, fix: expect.any(String) }),
    });
    expect(run.stderr).toContain("[api-config]");
  });
});

describe("a host name that does not resolve", () => {
  it("names the host, says it does not resolve, points at PLUMB_API_URL; never the key", async () => {
    const host = "plumb-no-such-host.invalid"; // .invalid never resolves (RFC 6761)
    // A resolver that cannot answer at all (no DNS on this machine) says EAI_AGAIN, not ENOTFOUND.
    const code = await lookup(host).then(
      () => "resolved",
      (error: NodeJS.ErrnoException) => error.code,
    );
    const run = await plumb(["plan", repo, "-o", "json"], {
      PLUMB_API_URL: `http://${host}:8123`,
      PLUMB_API_KEY: WRONG_KEY,
    });
    expect(run.code).toBe(1);
    const error = errorOf(run);
    expect(error.code).toBe("network");
    expect(error.message).not.toContain("is the server running");
    expect(run.stdout + run.stderr).not.toContain(WRONG_KEY);
    if (code === "ENOTFOUND") {
      expect(error.message).toContain(`the host name ${host} does not resolve`);
      expect(error.fix).toContain("check PLUMB_API_URL");
    } else {
      expect(code).toBe("EAI_AGAIN");
      expect(error.message).toContain(`the host name ${host} could not be resolved now`);
    }
  });
});
