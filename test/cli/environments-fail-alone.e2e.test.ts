import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { driftCommand } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { promotionRepo, stopPromotion } from "../support/promotion-repo.js";
import { api } from "../controller/support.js";
import { plain, PROD_KEY, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// plan, diff, drift and status over several environments: one environment whose control plane
// refuses its key (or whose key is not set where the command runs) is reported, and the others
// still run. The first such error ended the whole command: `plumb drift` with staging's control
// plane down said nothing of prod, and `plan -o json` printed no JSON at all. apply still stops
// there. Two real control planes, prod's deployment counted on its own.

let planes: TwoPlanes;
let dir: string;
const WRONG_KEY = "wrong-key-0123456789";

/** The command's output, stderr and exit code; `thrown` when it ended with an error. */
async function run(build: typeof planCommand, args: string[], env: Record<string, string>) {
  let out = "";
  let err = "";
  const keep: typeof planCommand = (io) =>
    build({
      ...io!,
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
    });
  const ran = await runCommand(keep, args, planes, env).then(
    (r) => ({ code: r.code, thrown: undefined }),
    (e: Error & { code?: string }) => ({ code: undefined, thrown: e }),
  );
  return { out, err, ...ran };
}

beforeAll(async () => {
  planes = await startTwoPlanes();
  dir = await promotionRepo(planes, { "agent.yaml": plain("agent") }, { prefix: "plumb-fail-alone-" });
  const applied = await runCommand(applyCommand, [dir, "--env", "prod", "--yes"], planes);
  expect(applied.code).toBe(0);
});

afterAll(() => stopPromotion(planes, dir));

describe("an environment that cannot be read, among others", () => {
  it("plan: the other environment is planned, the failed one named, exit 1", async () => {
    const { out, err, code, thrown } = await run(planCommand, [dir], { STAGING_API_KEY: WRONG_KEY });
    expect(thrown).toBeUndefined();
    expect(code).toBe(1);
    expect(out).toContain("== environment prod ==");
    expect(out).toContain("No changes: live matches the manifests (1 unchanged).");
    expect(err).toContain("plumb: environment staging: GET /v2/deployments failed: 401");
    expect(err).toContain("check environment staging's spec.api_key ($STAGING_API_KEY");
    expect(err).toContain("plumb: 1 of 2 environments failed (staging); the others ran");
    expect(out + err).not.toContain(WRONG_KEY);
  });

  it("plan -o json: the failed environment as {environment, error}, the other's plan beside it", async () => {
    const { out, code } = await run(planCommand, [dir, "-o", "json"], { STAGING_API_KEY: "" });
    expect(code).toBe(1);
    const json = JSON.parse(out) as {
      environments: Array<{ environment: string; error?: { code: string }; changes?: unknown[] }>;
    };
    // In promotion order: prod is promoted from staging.
    expect(json.environments.map((e) => [e.environment, e.error?.code])).toEqual([
      ["staging", "api-config"],
      ["prod", undefined],
    ]);
  });

  it("drift: prod's drift is still checked while staging's control plane is down", async () => {
    const { out, err, code } = await run(driftCommand, [dir], { STAGING_API_KEY: WRONG_KEY });
    expect(code).toBe(1);
    expect(out).toContain("== environment prod ==");
    expect(out).toMatch(/no drift|in sync/i);
    expect(err).toContain("plumb: environment staging:");
    // The report itself says staging was not reported: its heading stood empty, "No drift" below
    // prod's the only verdict on stdout (a drift job's log, a file).
    expect(out).toContain(
      "== environment staging ==\n! environment staging failed [unauthorized]: not reported (the error is on stderr)\n== environment prod ==",
    );
  });

  it("one environment selected, or apply: the error ends the command as before", async () => {
    const one = await run(planCommand, [dir, "--env", "staging"], { STAGING_API_KEY: WRONG_KEY });
    expect(one.thrown?.code).toBe("unauthorized");
    const apply = await run(applyCommand, [dir, "--yes"], {
      STAGING_API_KEY: WRONG_KEY,
    });
    expect(apply.thrown?.code).toBe("unauthorized");
    // Staging first (prod is promoted from it): prod is not applied after it failed.
    expect(apply.out).not.toContain("== environment prod ==");
    expect(apply.err).toContain(
      "plumb: environment staging failed, so prod was not applied (nothing sent there)",
    );
  });

  it("drift -o json: each item and object not checked carries its environment, as plan's changes do", async () => {
    // prod's deployment changed outside plumb (drift), and a second one whose secret is not set
    // where drift runs (not checked).
    const client = api(planes.prod.url, PROD_KEY);
    const live = await client.deployment("agent");
    await client.call("PATCH", `/v2/deployments/${live.id}`, {
      source_revision_config: { image_uri: "img/agent:hotfix" },
    });
    const secretOf = `${plain("keyed")}  secrets:\n    - {name: TOKEN, valueFrom: {env: KEYED_TOKEN}}\n`;
    await writeFile(join(dir, "keyed.yaml"), secretOf);
    try {
      const { out, code } = await run(driftCommand, [dir, "--env", "prod", "-o", "json"], {});
      expect(code).toBe(1);
      const json = JSON.parse(out) as {
        environments: Array<{
          environment: string;
          items: Array<{ name: string; environment?: string }>;
          not_checked: Array<{ name: string; environment?: string }>;
        }>;
      };
      const [prod] = json.environments;
      expect(prod!.items.map((i) => [i.name, i.environment])).toEqual([["agent", "prod"]]);
      expect(prod!.not_checked.map((i) => [i.name, i.environment])).toEqual([["keyed", "prod"]]);
    } finally {
      await rm(join(dir, "keyed.yaml"));
    }
  });

  it("--target of a deployment that does not run in prod: prod is skipped and says so, not 'No drift' nor no-manifests", async () => {
    const only = plain("only").replace("  name: only\n", "  name: only\n  environments: [staging]\n");
    await writeFile(join(dir, "only.yaml"), only);
    try {
      const drift = await run(driftCommand, [dir, "--target", "only"], {});
      expect(drift.code).toBe(0);
      // It said "No drift: 0 objects match git." of prod, which it never looked at.
      expect(drift.out).toContain(
        "== environment prod ==\nskipped: --target only: it does not run in prod\n",
      );
      expect(drift.out.split("== environment prod ==")[1]).not.toContain("match git");
      // plan failed prod with no-manifests ("no plumb manifests under ..."), exit 1.
      const plan = await run(planCommand, [dir, "--target", "only", "-o", "json"], {});
      expect(plan.code).toBe(0);
      const json = JSON.parse(plan.out) as { environments: Array<{ environment: string; skipped?: string }> };
      expect(json.environments.map((e) => [e.environment, e.skipped])).toEqual([
        ["staging", undefined],
        ["prod", "--target only: it does not run in prod"],
      ]);
      const none = await run(planCommand, [dir, "--env", "prod", "--target", "only"], {});
      expect(none.thrown).toMatchObject({
        code: "usage",
        message: "--target only runs in none of the environments selected (prod)",
      });
    } finally {
      await rm(join(dir, "only.yaml"));
    }
  });
});
