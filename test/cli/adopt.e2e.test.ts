import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAdopt } from "../../src/cli/adopt/adopt.js";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { loadStatusStore } from "../../src/status/status-store.js";
import { container, writeDoc } from "../controller/support.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// No state (a fresh clone, a new pod): plan warns that secrets will be re-sent; `plumb adopt`
// records the live deployments with the manifests' current secret values, sending no write request,
// and the next plan is a no-op.

let cp: RunningControlPlane;
let proxy: HoldingProxy;
let root: string;
afterEach(async () => {
  await proxy?.close();
  await cp?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const secret = { secrets: [{ name: "TOKEN", valueFrom: { env: "TOKEN" } }] };
const env = (token = "live-value") => ({
  PLUMB_API_URL: proxy.url,
  PLUMB_API_KEY: DEFAULT_API_KEY,
  TOKEN: token,
  NO_COLOR: "1",
});
const io = (token?: string) => {
  const captured = captureIo(cp);
  captured.env = env(token);
  return captured;
};

async function plan(token?: string) {
  const captured = io(token);
  await planCommand(captured).parseAsync(["node", "plan", root, "--detailed-exitcode"]);
  const code = process.exitCode;
  process.exitCode = 0;
  return { code, out: captured.out(), err: captured.err() };
}

async function setupApplied() {
  ({ cp, root } = await startPlane());
  proxy = await startHoldingProxy(cp.url);
  await writeDoc(root, "a.yaml", container("alpha", "img/alpha:1", secret));
  await writeDoc(root, "b.yaml", container("beta", "img/beta:1", secret));
  expect(await runApply(root, applyFlags(), io())).toBe(0);
  await rm(join(root, ".plumb"), { recursive: true, force: true }); // a fresh clone: no status
}

describe("no state, then plumb adopt", () => {
  it("plan warns once; adopt records without writing to the control plane; plan is then a no-op", async () => {
    await setupApplied();
    const before = await plan();
    expect(before.code).toBe(2);
    expect(before.err).toContain("2 live deployments have secrets but no recorded fingerprints");
    expect(before.err).toContain(`plumb adopt ${root}`);
    expect(before.err.match(/warning:/g)).toHaveLength(1);

    const seen = proxy.requests.length;
    const captured = io();
    expect(await runAdopt(root, { target: [], yes: true, output: "text" }, captured)).toBe(0);
    expect(captured.out()).toContain("adopt: Deployment alpha");
    expect(captured.out()).toContain("Adopt complete: 2 recorded, 0 skipped; nothing was sent.");
    expect(proxy.requests.slice(seen).filter((r) => r.method !== "GET")).toEqual([]);
    const store = await loadStatusStore(join(root, ".plumb", "status"));
    const record = store.objects.get("Deployment/alpha")!;
    expect(record).toMatchObject({ sync: "Synced", health: "Healthy", revision_status: "DEPLOYED" });
    expect(Object.keys(record.secret_fingerprints?.values ?? {})).toEqual(["TOKEN"]);
    expect(JSON.stringify(record)).not.toContain("live-value");

    const after = await plan();
    expect(after.code, after.out).toBe(0);
    expect(after.err).not.toContain("warning");
  });

  it("records no applied base for a deployment that differs live: plan then calls nothing drift", async () => {
    // The record said the manifest was applied (its digest) even where live differed from it (an
    // image, a secret the manifest has and live lacks): plan and drift then called each difference "drift:
    // changed outside plumb since its last apply", though plumb never applied that manifest.
    await setupApplied();
    await writeDoc(root, "a.yaml", container("alpha", "img/alpha:2", secret));
    const more = [...secret.secrets, { name: "EXTRA", valueFrom: { env: "TOKEN" } }];
    await writeDoc(root, "b.yaml", container("beta", "img/beta:1", { secrets: more }));
    expect(await runAdopt(root, { target: [], yes: true, output: "text" }, io())).toBe(0);
    const store = await loadStatusStore(join(root, ".plumb", "status"));
    for (const name of ["alpha", "beta"])
      expect(store.objects.get(`Deployment/${name}`)).toMatchObject({
        sync: "OutOfSync",
        manifest_digest: null,
      });
    const captured = io();
    await planCommand(captured).parseAsync(["node", "plan", root, "--output", "json"]);
    process.exitCode = 0;
    const changes = (
      JSON.parse(captured.out()) as {
        changes: Array<{ name: string; fields: Array<{ field: string; origin?: string }> }>;
      }
    ).changes;
    expect(changes.map((c) => [c.name, c.fields.map((f) => f.field)])).toEqual([
      ["alpha", ["source_revision_config.image_uri"]],
      ["beta", ["secrets"]],
    ]);
    expect(changes.flatMap((c) => c.fields.map((f) => f.origin))).not.toContain("drift");
  });

  it("prints the server's deployment id with its control characters escaped", async () => {
    // "adopt: Deployment alpha (ID)" printed the id as the control plane answered it.
    await setupApplied();
    await proxy.close();
    proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments?")
          ? Buffer.from(body.toString("utf8").replace(/"id":"([^"]+)"/g, '"id":"$1\\u001b[2J"'))
          : body,
    });
    const captured = io();
    expect(await runAdopt(root, { target: [], yes: true, output: "text" }, captured)).toBe(0);
    expect(captured.out()).toMatch(/adopt: Deployment alpha \("[0-9a-f-]+\\u001b\[2J"\)/);
    expect(captured.out()).not.toContain("\u001b");
  });

  it("prints a huge server id cut short, never whole", async () => {
    // A 300,000-character id was printed whole on each deployment's line.
    await setupApplied();
    await proxy.close();
    proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments?")
          ? Buffer.from(body.toString("utf8").replace(/"id":"([^"]+)"/g, `"id":"$1${"i".repeat(300_000)}"`))
          : body,
    });
    const captured = io();
    await runAdopt(root, { target: [], yes: true, output: "text" }, captured);
    expect(captured.out()).toMatch(/adopt: Deployment alpha \("[0-9a-f-]+i+"… \(\d+ more characters\)\)/);
    expect(captured.out().length).toBeLessThan(2_000);
  });

  it("refuses objects that do not exist live (exit 1) and still records the others", async () => {
    await setupApplied();
    await writeDoc(root, "c.yaml", container("gamma", "img/gamma:1", secret));
    const captured = io();
    expect(await runAdopt(root, { target: [], yes: true, output: "text" }, captured)).toBe(1);
    expect(captured.out()).toContain("skip:  gamma: does not exist live: plumb apply creates it");
    expect(captured.out()).toContain("2 recorded, 1 skipped");
  });

  it("asks for --yes off a terminal and records nothing", async () => {
    await setupApplied();
    await expect(runAdopt(root, { target: [], output: "text" }, io())).rejects.toMatchObject({
      code: "adopt-needs-confirmation",
    });
    expect((await loadStatusStore(join(root, ".plumb", "status"))).objects.size).toBe(0);
  });

  it("is the operator's assertion: a different env value is recorded, and plan then trusts it", async () => {
    await setupApplied();
    expect(await runAdopt(root, { target: [], yes: true, output: "text" }, io("another-value"))).toBe(0);
    // Adopted with "another-value": plan compares git with that, so it sees no change.
    expect((await plan("another-value")).code).toBe(0);
    expect((await plan("live-value")).code).toBe(2);
  });
});
