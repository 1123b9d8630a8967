import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { api, container, writeDoc } from "../controller/support.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// Saved plans: `plan --out FILE` then `apply --plan FILE` sends exactly the reviewed plan, and any
// change since (manifest, live deployment, secret value, a manifest added) refuses the whole apply
// with plan-stale before a single write.

let cp: RunningControlPlane;
let proxy: HoldingProxy;
let root: string;
let planFile: string;
const secret = { secrets: [{ name: "TOKEN", valueFrom: { env: "TOKEN" } }] };

beforeEach(async () => {
  ({ cp, root } = await startPlane());
  proxy = await startHoldingProxy(cp.url);
  planFile = join(root, "..", `${root.split("/").at(-1)}.plan.json`);
  await writeDoc(root, "a.yaml", container("alpha", "img/alpha:1", secret));
  await writeDoc(root, "b.yaml", container("beta", "img/beta:1"));
  expect(await runApply(root, applyFlags(), io())).toBe(0);
});
afterEach(async () => {
  await proxy?.close();
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
  await rm(planFile, { force: true });
});

function io(token = "s3cret-token-value") {
  const captured = captureIo(cp);
  captured.env = { PLUMB_API_URL: proxy.url, PLUMB_API_KEY: DEFAULT_API_KEY, TOKEN: token, NO_COLOR: "1" };
  return captured;
}

async function savePlan(token?: string) {
  const captured = io(token);
  await planCommand(captured).parseAsync(["node", "plan", root, "--out", planFile]);
  process.exitCode = 0;
  return captured;
}

const writes = () => proxy.requests.filter((r) => r.method !== "GET").length;
const applySaved = (token?: string) => runApply(root, applyFlags({ plan: planFile }), io(token));

describe("saved plans", () => {
  it("apply --plan sends exactly the saved plan; the file holds no secret value", async () => {
    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:2", secret));
    const captured = await savePlan("new-token-value");
    expect(captured.err()).toContain(`plumb apply ${root} --plan ${planFile}`);
    const text = await readFile(planFile, "utf8");
    expect(text).not.toContain("new-token-value");
    const saved = JSON.parse(text) as {
      summary: { update: number };
      saved: { objects: Array<{ name: string; secrets: unknown }> };
    };
    expect(saved.summary.update).toBe(1);
    expect(saved.saved.objects.map((o) => o.name)).toEqual(["alpha", "beta"]);

    const before = writes();
    expect(await applySaved("new-token-value")).toBe(0);
    expect(writes() - before).toBe(1); // the one PATCH of alpha
    const alpha = await api(cp.url).deployment("alpha");
    expect(alpha.source_revision_config.image_uri).toBe("img/alpha:2");
  });

  const stale: Array<[string, () => Promise<unknown>, RegExp, string?]> = [
    [
      "a manifest edited",
      () => writeDoc(root, "a.yaml", container("alpha", "img/alpha:3", secret)),
      /Deployment\/alpha: manifest changed/,
    ],
    [
      "the live deployment changed",
      async () => {
        const beta = await api(cp.url).deployment("beta");
        await fetch(`${cp.url}/v2/deployments/${beta.id}`, {
          method: "PATCH",
          headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
          body: JSON.stringify({ source_revision_config: { image_uri: "img/beta:hotfix" } }),
        });
      },
      /Deployment\/beta: live changed \(updated_at .* → .*\)/,
    ],
    [
      "a secret value changed",
      async () => undefined,
      /Deployment\/alpha: secret TOKEN changed/,
      "another-token",
    ],
    [
      "a manifest added",
      () => writeDoc(root, "c.yaml", container("gamma", "img/gamma:1")),
      /Deployment\/gamma: manifest added since the plan/,
    ],
    [
      "a manifest removed",
      () => rm(join(root, "b.yaml")),
      /Deployment\/beta: manifest removed since the plan/,
    ],
  ];

  it.each(stale)("refuses the whole apply with zero writes when %s", async (_what, move, message, token) => {
    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:2", secret));
    await savePlan();
    await move();
    const before = writes();
    const refused = await applySaved(token).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: "plan-stale" });
    expect((refused as Error).message).toMatch(message);
    expect((refused as Error).message).toContain("nothing was sent");
    expect(writes()).toBe(before);
    expect((await api(cp.url).deployment("alpha")).source_revision_config.image_uri).toBe("img/alpha:1");
  });

  it("refuses a file that is not a saved plan, and --target with --plan", async () => {
    await writeFile(planFile, '{"format_version": "1", "changes": []}');
    await expect(applySaved()).rejects.toMatchObject({ code: "plan-invalid" });
    await savePlan();
    await expect(
      runApply(root, applyFlags({ plan: planFile, target: ["alpha"] }), io()),
    ).rejects.toMatchObject({
      code: "usage",
    });
  });
});
