import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAdopt } from "../../src/cli/adopt/adopt.js";
import { runApply } from "../../src/cli/sync/apply.js";
import { runDrift } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { applyFlags, captureIo, startPlane } from "../cli/reconcile-helpers.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "../controller/support.js";

// Issue 23 item 6, the three-way model: git, live, and what plumb last applied. A git edit not yet
// applied is a change (drift --write never writes it back); a live edit while git stayed is drift
// (a controller restart reports it, heals it only with --self-heal). Counted on the control plane.

let cp: RunningControlPlane;
let root: string;
const running: Controller[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop(1_000);
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

const EDITED = ["d0", "d1", "d2", "d3", "d4"];
const client = () => api(cp.url);
const image = async (name: string) => (await client().deployment(name)).source_revision_config?.image_uri;
async function revisions(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const d of await client().deployments()) counts[d.name] = (await client().revisions(d.id)).length;
  return counts;
}
const editLive = async (name: string, imageUri: string) =>
  client().call("PATCH", `/v2/deployments/${(await client().deployment(name)).id}`, {
    source_revision_config: { image_uri: imageUri },
  });

async function applied(names: readonly string[]) {
  ({ cp, root } = await startPlane());
  for (const name of names) await writeDoc(root, `${name}.yaml`, container(name, `img/${name}:v1`));
  expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
}

async function controller(selfHeal: boolean) {
  const started = await startController({
    source: { kind: "dir", dir: root },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    listen: { host: "127.0.0.1", port: 0 },
    selfHeal,
    concurrency: 4,
    debounceMs: 30,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: process.env,
    logger: memoryLogger().logger,
  });
  running.push(started);
  await waitFor("first reconcile of every object", () => started.ready());
  await waitFor("queue idle", () => started.status().queue.running === 0);
  return started;
}

describe("three-way: change, drift, conflict", () => {
  it("drift --write writes back only drift: 5 edits in flight are applied once, not reverted", async () => {
    await applied([...EDITED, "ui"]);
    await editLive("ui", "img/ui:hotfix"); // drift: changed in the UI
    for (const name of EDITED) await writeDoc(root, `${name}.yaml`, container(name, `img/${name}:v2`));

    const io = captureIo(cp);
    expect(await runDrift(root, { output: "text", target: [], write: true }, io)).toBe(2);
    expect(io.out()).toContain(
      'wrote ui.yaml:8 ui source_revision_config.image_uri: "img/ui:v1" → "img/ui:hotfix"',
    );
    expect(io.out()).toContain("d0 source_revision_config.image_uri: a change in git not applied yet");
    for (const name of EDITED) expect(await readFile(join(root, `${name}.yaml`), "utf8")).toContain(`:v2`);

    // plan says which side moved, in JSON too.
    const plan = captureIo(cp);
    await planCommand(plan).parseAsync(["node", "plan", root, "--output", "json"]);
    process.exitCode = 0;
    const json = JSON.parse(plan.out()) as {
      changes: Array<{ name: string; fields: Array<{ origin?: string }> }>;
    };
    expect(json.changes.find((c) => c.name === "d0")?.fields.map((f) => f.origin)).toEqual(["change"]);

    expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
    for (const name of EDITED) expect(await image(name)).toBe(`img/${name}:v2`);
    expect(await image("ui")).toBe("img/ui:hotfix");
    // One revision per change: the create and the edit (the UI's own edit for ui), nothing reverted.
    expect(await revisions()).toEqual({ d0: 2, d1: 2, d2: 2, d3: 2, d4: 2, ui: 2 });
  });

  it("a controller restart applies changes only and reports drift; --self-heal heals it", async () => {
    await applied(["drifted", "edited", "same"]);
    await editLive("drifted", "img/drifted:hotfix");
    await writeDoc(root, "edited.yaml", container("edited", "img/edited:v2"));

    const first = await controller(false);
    expect(await image("drifted")).toBe("img/drifted:hotfix");
    expect(await image("edited")).toBe("img/edited:v2");
    expect(await revisions()).toEqual({ drifted: 2, edited: 2, same: 1 });
    expect(first.status().objects.find((o) => o.name === "drifted")?.sync).toBe("OutOfSync");

    // The plan names the drift.
    const plan = captureIo(cp);
    await planCommand(plan).parseAsync(["node", "plan", root]);
    process.exitCode = 0;
    expect(plan.out()).toContain("(drift: changed outside plumb since its last apply)");
    await first.stop(1_000);

    await controller(true);
    await waitFor("healed", async () => (await image("drifted")) === "img/drifted:v1");
    expect(await revisions()).toEqual({ drifted: 3, edited: 2, same: 1 });
  });

  it("a field changed in git and live alike is a conflict: reported, never written back; apply sends git's", async () => {
    await applied(["both"]);
    await editLive("both", "img/both:ui");
    await writeDoc(root, "both.yaml", container("both", "img/both:git"));
    const io = captureIo(cp);
    expect(await runDrift(root, { output: "text", target: [], write: true }, io)).toBe(2);
    expect(io.out()).toContain("a conflict: git and live both changed");
    expect(await readFile(join(root, "both.yaml"), "utf8")).toContain("img/both:git");
    expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
    expect(await image("both")).toBe("img/both:git");
    expect(await revisions()).toEqual({ both: 3 });
  });

  it("an adopted deployment that matched its manifest has a base: a later UI edit is drift, written back", async () => {
    await applied(["kept"]);
    await rm(join(root, ".plumb"), { recursive: true, force: true }); // a fresh clone: no state
    expect(await runAdopt(root, { target: [], yes: true, output: "text" }, captureIo(cp))).toBe(0);
    await editLive("kept", "img/kept:ui");
    const io = captureIo(cp);
    expect(await runDrift(root, { output: "text", target: [], write: true }, io)).toBe(2);
    expect(io.out()).toContain(
      'wrote kept.yaml:8 kept source_revision_config.image_uri: "img/kept:v1" → "img/kept:ui"',
    );
  });
});
