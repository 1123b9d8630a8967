import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt } from "../support/built-cli.js";

// `plumb plan -o markdown` over two environments, each with 150 deployments to create: each
// environment's document was bounded alone (65,000 characters), so the comment held about 103,000,
// which GitHub refuses (65,536 at most). The built CLI against the real local control plane: the
// whole stays under 65,000, each environment says what of it was cut, and nothing is cut inside a
// code block or a <details> section.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
let cp: RunningControlPlane;
let root: string;

beforeAll(async () => {
  assertBuilt();
  cp = await startControlPlane({ revisionSeconds: 0 });
  root = await mkdtemp(join(tmpdir(), "plumb-md-envs-"));
  for (const name of ["a", "b"])
    await writeFile(
      join(root, `env-${name}.yaml`),
      `apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: ${name}}\nspec:\n  api_url: {env: PLAN_API_URL}\n  api_key: {env: PLAN_API_KEY}\n  mode: saas\n  name_suffix: -${name}\n`,
    );
  for (let i = 1; i <= 150; i += 1)
    await writeFile(
      join(root, `d${i}.yaml`),
      `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: agent-${i}}\nspec: {source: internal_container, source_revision_config: {image_uri: "registry.example.com/team/agent-with-a-long-name-${i}:1.2.3"}}\n`,
    );
});
afterAll(async () => {
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

/** stdout alone (the comment), and the exit code. */
function plan(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [MAIN, "plan", root, "--output", "markdown", ...args],
      {
        env: { ...process.env, NO_COLOR: "1", PLAN_API_URL: cp.url, PLAN_API_KEY: DEFAULT_API_KEY },
        maxBuffer: 16 * 1024 * 1024,
      },
      (_error, stdout) => resolve({ code: child.exitCode, stdout }),
    );
  });
}

it("two environments' plans make one comment under 65,000 characters, saying what was cut", async () => {
  const { code, stdout } = await plan(["--env", "a", "--env", "b"]);
  expect(code).toBe(0);
  expect(stdout.length).toBeLessThanOrEqual(65_000);
  for (const name of ["a", "b"]) {
    expect(stdout).toContain(`## Environment ${name}\n\n<!-- plumb plan -->`);
    expect(stdout).toMatch(
      new RegExp(`> \\*\\*Truncated:\\*\\* \\d+ more characters of environment ${name}'s output not shown`),
    );
    expect(stdout).toContain(`agent-1-${name}`);
  }
  // Cut between sections: every code block and every <details> closed.
  expect(stdout.match(/^```/gm)?.length ?? 0).toSatisfy((n: number) => n % 2 === 0);
  expect(stdout.match(/<details>/g)?.length).toBe(stdout.match(/<\/details>/g)?.length);
});
