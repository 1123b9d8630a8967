import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { TEST_POLL } from "./reconcile-helpers.js";
import { environmentDoc, plain, PROD_KEY, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// -o markdown (a pull-request comment) over several environments when one of them fails
// (docs/environments.md "--env on validate, plan, ..."): the failed environment's section said
// nothing (its heading alone, as if it had nothing to report), and an environment apply did not
// reach was left out of the comment altogether. JSON had both; stderr said it, which a CI job's
// comment step does not show.

let staging: RunningControlPlane;
let prod: RunningControlPlane;
let repo: string;

beforeAll(async () => {
  ({ staging, prod } = await startTwoPlanes());
  repo = await mkdtemp(join(tmpdir(), "plumb-env-probe-markdown-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "environments"));
  await writeFile(join(repo, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(
    join(repo, "environments", "prod.yaml"),
    environmentDoc("prod", "  promotion: {from: staging}\n"),
  );
  await writeFile(join(repo, "a.yaml"), plain("a"));
});
afterAll(async () => {
  await staging?.stop();
  await prod?.stop();
  await rm(repo, { recursive: true, force: true });
});

/** runCommand's run, its output kept when the command ends with an error (apply's first failure). */
async function capture(build: Parameters<typeof runCommand>[0], args: string[], env: Record<string, string>) {
  let out = "";
  const io = {
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
    stdin: { isTTY: false },
    signals: { once: () => process, removeListener: () => process },
    poll: TEST_POLL,
    env: {
      STAGING_API_URL: staging.url,
      STAGING_API_KEY: STAGING_KEY,
      PROD_API_URL: prod.url,
      PROD_API_KEY: PROD_KEY,
      NO_COLOR: "1",
      ...env,
    },
  };
  let error = "";
  try {
    await build(io).parseAsync(args, { from: "user" });
  } catch (thrown) {
    error = String(thrown);
  } finally {
    process.exitCode = 0;
  }
  return { out, error };
}

/** The text under `## Environment NAME`, up to the next environment's heading. */
const section = (markdown: string, name: string) =>
  markdown.split(/^## Environment /m).find((part) => part.startsWith(`${name}\n`)) ?? "";

describe("-o markdown over environments, one failing", () => {
  it("plan: the failed environment's section says it failed and why, the other's plan is there", async () => {
    const { out, code } = await runCommand(
      planCommand,
      [repo, "-o", "markdown"],
      { staging, prod },
      {
        PROD_API_KEY: "",
      },
    );
    expect(code).toBe(1);
    expect(section(out, "staging")).toContain("1 | 0 | 0 | 0");
    expect(section(out, "prod")).toMatch(
      /\*\*Failed:\*\* environment prod: spec\.api_key .*PROD_API_KEY, which is not set/,
    );
    expect(section(out, "prod")).toContain("`[api-config]`");
  });

  it("apply: the environment not reached is in the comment, said not applied; nothing was sent to it", async () => {
    const { out, error } = await capture(applyCommand, [repo, "-o", "markdown", "--yes"], {
      STAGING_API_KEY: "",
    });
    expect(error).toMatch(/STAGING_API_KEY/);
    expect(section(out, "staging")).toMatch(/\*\*Failed:\*\* environment staging: spec\.api_key/);
    expect(section(out, "prod")).toContain("**Not applied:** environment staging did not converge");
    expect(await api(prod.url, PROD_KEY).deployments()).toEqual([]);
    expect(await api(staging.url, STAGING_KEY).deployments()).toEqual([]);
  });
});
