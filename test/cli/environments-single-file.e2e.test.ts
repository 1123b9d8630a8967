import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { validateCommand } from "../../src/cli/offline/validate.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { environmentDoc, PROD_KEY, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// One manifest file as PATH in a repository with environments (docs/environments.md, "One file as
// PATH"): it runs with the Environment documents of the nearest directory tree that has any, up to
// the git root, and its prune stays scoped to the file (a one-file apply never deletes siblings).

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let repo: string;

const environment = environmentDoc;

const deployment = (name: string, image: string, prodImage: string) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  source: internal_container
  source_revision_config: {image_uri: "${image}"}
environments:
  prod:
    spec:
      source_revision_config: {image_uri: "${prodImage}"}
`;

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
  repo = await mkdtemp(join(tmpdir(), "plumb-env-one-file-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "environments"));
  await mkdir(join(repo, "agents"));
  await writeFile(join(repo, "environments", "staging.yaml"), environment("staging"));
  await writeFile(join(repo, "environments", "prod.yaml"), environment("prod"));
  await writeFile(join(repo, "agents", "a.yaml"), deployment("a", "img/a:2", "img/a:1"));
  await writeFile(join(repo, "agents", "b.yaml"), deployment("b", "img/b:2", "img/b:1"));
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(repo, { recursive: true, force: true });
});

const run = (command: typeof planCommand | typeof applyCommand, args: string[]) =>
  runCommand(command, args, { staging, prod });

const images = async (cp: RunningControlPlane, key: string) =>
  Object.fromEntries(
    (await api(cp.url, key).deployments()).map((d) => [d.name, d.source_revision_config?.image_uri]),
  );

describe("one file as PATH with environments", () => {
  it("plans the file in each environment with the repository's Environment documents", async () => {
    const file = join(repo, "agents", "a.yaml");
    const json = await run(planCommand, [file, "--env", "prod", "--output", "json"]);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.out) as {
      environments: Array<{ environment: string; changes: Array<{ name: string; action: string }> }>;
    };
    expect(parsed.environments.map((e) => [e.environment, e.changes.map((c) => c.name)])).toEqual([
      ["prod", ["a"]],
    ]);
    expect(json.out).toContain("img/a:1");
    const both = await run(planCommand, [file]);
    expect(both.out).toContain("== environment prod ==");
    expect(both.out).toContain("== environment staging ==");
  });

  it("apply of one file with --prune never deletes a sibling recorded beside it", async () => {
    const a = join(repo, "agents", "a.yaml");
    const b = join(repo, "agents", "b.yaml");
    expect((await run(applyCommand, [a, "--env", "staging", "--yes"])).code).toBe(0);
    expect((await run(applyCommand, [b, "--env", "staging", "--yes"])).code).toBe(0);
    expect(await images(staging, STAGING_KEY)).toEqual({ a: "img/a:2", b: "img/b:2" });
    expect(await images(prod, PROD_KEY)).toEqual({});
    // a's file alone, with --prune: b (recorded in the same store, from another file) stays.
    const pruned = await run(applyCommand, [a, "--env", "staging", "--prune", "--yes"]);
    expect(pruned.code).toBe(0);
    expect(pruned.out).not.toContain("removed from git");
    expect(await images(staging, STAGING_KEY)).toEqual({ a: "img/a:2", b: "img/b:2" });
    // prod's override applies to the one file too, on prod's control plane.
    expect((await run(applyCommand, [a, "--env", "prod", "--yes"])).code).toBe(0);
    expect(await images(prod, PROD_KEY)).toEqual({ a: "img/a:1" });
  });
});

// A directory as PATH whose tree defines no Environment runs with those above it, by the same rule
// as one file (docs/environments.md, "A directory as PATH"); its prune stays scoped to it.
describe("a directory as PATH with environments above it", () => {
  it("validates and plans the directory in each environment", async () => {
    let out = "";
    process.exitCode = 0;
    await validateCommand({ write: (t: string) => (out += t) }).parseAsync([join(repo, "agents")], {
      from: "user",
    });
    expect(out).toContain("2 valid manifests, 0 errors");
    expect(process.exitCode).toBe(0);
    const json = await run(planCommand, [join(repo, "agents"), "--env", "prod", "--output", "json"]);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.out) as {
      environments: Array<{ environment: string; changes: Array<{ name: string; action: string }> }>;
    };
    expect(parsed.environments.map((e) => [e.environment, e.changes.map((c) => [c.name, c.action])])).toEqual(
      [
        [
          "prod",
          [
            ["a", "noop"],
            ["b", "create"],
          ],
        ],
      ],
    );
    expect(json.out).toContain("img/b:1");
  });

  it("apply --prune of the directory deletes what left it, never what another directory applied", async () => {
    await mkdir(join(repo, "others"));
    await writeFile(join(repo, "others", "c.yaml"), deployment("c", "img/c:2", "img/c:1"));
    expect((await run(applyCommand, [join(repo, "others"), "--env", "staging", "--yes"])).code).toBe(0);
    expect((await run(applyCommand, [join(repo, "agents"), "--env", "staging", "--yes"])).code).toBe(0);
    expect(await images(staging, STAGING_KEY)).toEqual({ a: "img/a:2", b: "img/b:2", c: "img/c:2" });
    await unlink(join(repo, "agents", "b.yaml"));
    const pruned = await run(applyCommand, [join(repo, "agents"), "--env", "staging", "--prune", "--yes"]);
    expect(pruned.code).toBe(0);
    // b left the directory and is deleted; c, applied from others/, stays.
    expect(await images(staging, STAGING_KEY)).toEqual({ a: "img/a:2", c: "img/c:2" });
    expect(await images(prod, PROD_KEY)).toEqual({ a: "img/a:1" });
  });
});

// A PATH whose manifests name no environment runs in every environment when one is asked for by
// name (--env): the Environment documents above it are read as for one that names some. Without
// --env it is never pulled into them (docs/environments.md, "One file as PATH"): it ran against
// PLUMB_API_URL, and --env was refused with "drop --env", which sent it there too.
describe("a PATH whose manifests name no environment, with --env", () => {
  const plainDeployment = (name: string) => `apiVersion: plumb/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/${name}:1"}
`;
  const validate = async (args: string[]) => {
    let out = "";
    let err = "";
    process.exitCode = 0;
    try {
      await validateCommand({ write: (t: string) => (out += t) }).parseAsync(args, { from: "user" });
    } catch (error) {
      err += String(error); // (an unknown --env is a usage error, thrown)
    }
    const code = process.exitCode;
    process.exitCode = 0;
    return { out, err, code };
  };

  beforeAll(async () => {
    await mkdir(join(repo, "plain", "nested"), { recursive: true });
    await writeFile(join(repo, "plain", "p.yaml"), plainDeployment("p"));
    await writeFile(join(repo, "plain", "nested", "q.yaml"), plainDeployment("q"));
  });

  it("a directory applies in the environment named, counted on its control plane alone", async () => {
    const applied = await run(applyCommand, [join(repo, "plain"), "--env", "staging", "--yes"]);
    expect(applied.code).toBe(0);
    expect(await images(staging, STAGING_KEY)).toMatchObject({ p: "img/p:1", q: "img/q:1" });
    expect(await images(prod, PROD_KEY)).not.toHaveProperty("p");
    expect(await images(prod, PROD_KEY)).not.toHaveProperty("q");
  });

  it("one file applies in the environment named, from a directory below the one above", async () => {
    const file = join(repo, "plain", "nested", "q.yaml");
    expect((await run(applyCommand, [file, "--env", "prod", "--yes"])).code).toBe(0);
    expect(await images(prod, PROD_KEY)).toMatchObject({ q: "img/q:1" });
    expect(await images(prod, PROD_KEY)).not.toHaveProperty("p");
  });

  it("validate says which environments are defined above for a name that is not one", async () => {
    expect(await validate([join(repo, "plain"), "--env", "staging"])).toMatchObject({ code: 0 });
    const wrong = await validate([join(repo, "plain"), "--env", "stagin"]);
    expect(wrong.err).toContain('unknown environment "stagin" in --env; defined: prod, staging');
  });

  it("without --env it is not pulled into the environments above: it targets PLUMB_API_URL", async () => {
    const planned = await runCommand(
      planCommand,
      [join(repo, "plain")],
      { staging, prod },
      {
        PLUMB_API_KEY: "plain-key",
      },
    ).catch((e: Error) => ({ out: "", err: e.message }));
    expect(planned.err).toContain("could not reach http://127.0.0.1:9; check PLUMB_API_URL");
    expect(planned.out).not.toContain("== environment");
  });

  it("without --env and no PLUMB_API_URL, the refusal names the environments --env could run it in", async () => {
    const refused = await runCommand(
      planCommand,
      [join(repo, "plain")],
      { staging, prod },
      {
        PLUMB_API_URL: "",
      },
    ).catch((e: Error) => ({ err: e.message }));
    expect(refused.err).toBe(
      "no API URL: set PLUMB_API_URL or pass --api-url, or pass --env NAME to run in an environment defined above PATH (prod, staging)",
    );
  });

  it("with no Environment under PATH nor above it, --env says where it looked", async () => {
    const bare = await mkdtemp(join(tmpdir(), "plumb-env-none-"));
    try {
      execFileSync("git", ["init", "-q", bare]);
      await mkdir(join(bare, "team"));
      await writeFile(join(bare, "team", "p.yaml"), plainDeployment("p"));
      const refused = await run(planCommand, [join(bare, "team"), "--env", "staging"]).catch((e: Error) => ({
        err: e.message,
      }));
      expect(refused.err).toContain(
        "no kind: Environment document is defined under PATH, nor above it up to the root of its git repository",
      );
      // Nothing above to name: the refusal as before environments.
      const plain = await runCommand(
        planCommand,
        [join(bare, "team")],
        { staging, prod },
        {
          PLUMB_API_URL: "",
        },
      ).catch((e: Error) => ({ err: e.message }));
      expect(plain.err).toBe("no API URL: set PLUMB_API_URL or pass --api-url");
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });
});
