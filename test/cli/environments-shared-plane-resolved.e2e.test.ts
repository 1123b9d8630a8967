import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { validateCommand } from "../../src/cli/offline/validate.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { TEST_POLL } from "./reconcile-helpers.js";

// Two environments written with different variables (STAGING_API_URL, PROD_API_URL) that hold
// the same control plane's URL and key, and no name_suffix: validate cannot see it (it compares the
// settings as written), and each environment's apply changed the other's deployment, a prune of one
// deleting it. plan and apply compare what the settings resolve to and refuse before anything is
// sent. One real control plane, its deployments counted.

const KEY = "shared-key-0123456789abcdef";
let plane: RunningControlPlane;
let dir: string;

const environment = (name: string, extra = "") =>
  `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: ${name}\nspec:\n  api_url: {env: ${name.toUpperCase()}_API_URL}\n  api_key: {env: ${name.toUpperCase()}_API_KEY}\n  mode: saas\n${extra}`;

async function run(build: typeof applyCommand, args: string[], env: Record<string, string>) {
  let out = "";
  process.exitCode = 0;
  const io = {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
    env,
    poll: TEST_POLL,
  };
  const error = await build(io)
    .parseAsync(args, { from: "user" })
    .then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
  const code = process.exitCode;
  process.exitCode = 0;
  return { out, error, code };
}

const deployments = async () => {
  const res = await fetch(`${plane.url}/v2/deployments`, { headers: { "x-api-key": KEY } });
  return ((await res.json()) as { resources: Array<{ name: string }> }).resources.map((d) => d.name).sort();
};

beforeAll(async () => {
  plane = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }],
  });
  dir = await mkdtemp(join(tmpdir(), "plumb-shared-resolved-"));
  await writeFile(join(dir, "envs.yaml"), `${environment("staging")}---\n${environment("prod")}`);
  await writeFile(
    join(dir, "agent.yaml"),
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: agent\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: "img/agent:1"}\n`,
  );
});

afterAll(async () => {
  await plane?.stop();
  await rm(dir, { recursive: true, force: true });
});

const BOTH = () => ({
  STAGING_API_URL: plane.url,
  STAGING_API_KEY: KEY,
  PROD_API_URL: `${plane.url}/`, // the same control plane, written another way
  PROD_API_KEY: KEY,
});

describe("two environments whose settings resolve to one control plane", () => {
  it("validate, which compares the settings as written, passes", async () => {
    let out = "";
    process.exitCode = 0;
    await validateCommand({ write: (t: string) => (out += t) }).parseAsync([dir], { from: "user" });
    process.exitCode = 0;
    expect(out).toContain("0 errors");
  });

  it("apply --env staging is refused before anything is sent, naming both and the name", async () => {
    const { error } = await run(applyCommand, [dir, "--env", "staging", "--yes"], BOTH());
    expect(error?.code).toBe("environment-name-collision");
    expect(error?.message).toContain(
      "environments staging and prod reach the same control plane here (their api_url, api_key and tenant_id resolve to the same values, though written differently) and both name a deployment agent there",
    );
    expect(error?.message).not.toContain(KEY);
    expect(await deployments()).toEqual([]);
  });

  it("with a name_suffix, or when the other's settings cannot be read here, each applies", async () => {
    const { code } = await run(applyCommand, [dir, "--env", "staging", "--yes"], {
      ...BOTH(),
      PROD_API_KEY: "",
    });
    expect(code).toBe(0);
    expect(await deployments()).toEqual(["agent"]);

    await writeFile(
      join(dir, "envs.yaml"),
      `${environment("staging", "  name_suffix: -staging\n")}---\n${environment("prod")}`,
    );
    const both = await run(applyCommand, [dir, "--yes"], BOTH());
    expect(both.error).toBeUndefined();
    expect(both.code).toBe(0);
    expect(await deployments()).toEqual(["agent", "agent-staging"]);
  });
});
