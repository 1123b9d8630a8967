import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { type Controller, startController } from "../../src/controller/controller.js";
import { runInProcess } from "../support/in-process-cli.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "../controller/support.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// plumb drift follows the three-way model (docs/status.md "Three-way"): a change in git not applied
// yet is pending (exit 0, listed apart), live moved is drift (exit 2), both moved is a conflict
// (exit 2); --fail-on-pending makes pending exit 2 too. A record older than applied_spec takes git's
// spec as its base only when its digest is git's; else the base is unknown: reported, never written
// back by drift --write nor by a controller restart. Against the real local control plane, through
// the CLI's own parsing (main() in process).

let cp: RunningControlPlane;
let root: string;
const running: Controller[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop(1_000);
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

const client = () => api(cp.url);
const drift = (...args: string[]) =>
  runInProcess(["drift", root, ...args], { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY });
const editLive = async (name: string, body: Record<string, unknown>) =>
  client().call("PATCH", `/v2/deployments/${(await client().deployment(name)).id}`, body);
const revisions = async (name: string) =>
  (await client().revisions((await client().deployment(name)).id)).length;

async function applied(names: readonly string[]) {
  ({ cp, root } = await startPlane());
  for (const name of names) await writeDoc(root, `${name}.yaml`, container(name, `img/${name}:v1`));
  expect(await runApply(root, applyFlags(), captureIo(cp))).toBe(0);
}

type Json = {
  in_sync: boolean;
  drifted: boolean;
  summary: Record<string, number>;
  items: Array<{ name: string; reason: string; origin: string; field_origins: Record<string, string> }>;
};
const IMAGE = "source_revision_config.image_uri";

describe("plumb drift: change, drift, conflict", () => {
  it("a pending git change exits 0 and says pending; --fail-on-pending exits 2", async () => {
    await applied(["a", "b"]);
    await writeDoc(root, "a.yaml", container("a", "img/a:v2"));

    const text = await drift();
    expect(text.code, text.output).toBe(0);
    expect(text.output).toContain("Pending (git changed since the last apply; run plumb apply):");
    expect(text.output).toContain("Deployment a: live differs from git (pending:");
    expect(text.output).toContain("No drift: 1 object matches git; 1 object pending");

    const json = await drift("--output", "json");
    expect(json.code).toBe(0);
    const report = JSON.parse(json.output) as Json;
    expect(report).toMatchObject({ in_sync: false, drifted: false, summary: { pending: 1 } });
    expect(report.items).toMatchObject([
      { name: "a", origin: "change", field_origins: { [IMAGE]: "change" } },
    ]);

    expect((await drift("--fail-on-pending")).code).toBe(2);
    expect((await runInProcess(["drift", "--help"], {})).output).toContain("--fail-on-pending");
    // Nothing was sent: the pending change waits for plumb apply.
    expect(await revisions("a")).toBe(1);
  });

  it("a live edit exits 2 (drift); git and live both moved exits 2 (conflict); JSON says which per field", async () => {
    await applied(["a", "b", "c"]);
    await editLive("a", { source_revision_config: { image_uri: "img/a:hotfix" } }); // drift
    await editLive("b", { source_revision_config: { image_uri: "img/b:hotfix" } }); // and git moved too:
    await writeDoc(root, "b.yaml", container("b", "img/b:v2")); // conflict
    await writeDoc(root, "c.yaml", container("c", "img/c:v2")); // pending

    const text = await drift();
    expect(text.code, text.output).toBe(2);
    expect(text.output).toContain("Deployment a: live differs from git (drift)");
    expect(text.output).toContain(
      "Deployment b: live differs from git (conflict: git and live both changed since the last apply)",
    );
    expect(text.output).toContain("Deployment c: live differs from git (pending:");
    expect(text.output).toContain("Drift: 2 objects (2 differs); 1 object pending");

    const report = JSON.parse((await drift("--output", "json")).output) as Json;
    const byName = Object.fromEntries(report.items.map((i) => [i.name, i]));
    expect(report.drifted).toBe(true);
    expect(byName.a).toMatchObject({ origin: "drift", field_origins: { [IMAGE]: "drift" } });
    expect(byName.b).toMatchObject({ origin: "conflict", field_origins: { [IMAGE]: "conflict" } });
    expect(byName.c).toMatchObject({ origin: "change", field_origins: { [IMAGE]: "change" } });
  });

  it("a record older than applied_spec: git's spec is its base when its digest is git's, else the base is unknown", async () => {
    await applied(["same", "moved"]);
    // The records as an older plumb wrote them: no applied_spec (nor seq).
    const dir = join(root, ".plumb/status");
    for (const file of await readdir(dir)) {
      if (!file.endsWith(".json")) continue;
      const record = JSON.parse(await readFile(join(dir, file), "utf8")) as Record<string, unknown>;
      expect(record.applied_spec).toBeDefined();
      delete record.applied_spec;
      delete record.seq;
      await writeFile(join(dir, file), `${JSON.stringify(record, null, 2)}\n`);
    }
    // "same": git still is what was applied, live moved: drift, as with applied_spec.
    await editLive("same", { source_revision_config: { image_uri: "img/same:hotfix" } });
    // "moved": git changed since that apply and live moved too: which side moved is not known.
    await writeDoc(root, "moved.yaml", container("moved", "img/moved:v2"));
    await editLive("moved", { source_revision_config: { image_uri: "img/moved:hotfix" } });

    const report = JSON.parse((await drift("--output", "json")).output) as Json;
    const byName = Object.fromEntries(report.items.map((i) => [i.name, i]));
    expect(byName.same).toMatchObject({ origin: "drift", field_origins: { [IMAGE]: "drift" } });
    expect(byName.moved).toMatchObject({ origin: "unknown", field_origins: { [IMAGE]: "unknown" } });
    const plan = await runInProcess(["plan", root], {
      PLUMB_API_URL: cp.url,
      PLUMB_API_KEY: DEFAULT_API_KEY,
    });
    expect(plan.output).toContain("(unknown base: the record does not say what plumb last applied");

    // drift --write writes back the drift of "same", nothing of "moved".
    const written = await drift("--write");
    expect(written.code).toBe(2);
    expect(written.output).toContain("wrote same.yaml");
    expect(written.output).toMatch(
      /kept {2}moved\.yaml moved source_revision_config\.image_uri: unknown base/,
    );
    expect(await readFile(join(root, "same.yaml"), "utf8")).toContain("img/same:hotfix");
    expect(await readFile(join(root, "moved.yaml"), "utf8")).toContain("img/moved:v2");

    // A controller (re)started on these records, without --self-heal, sends nothing for either.
    const before = { same: await revisions("same"), moved: await revisions("moved") };
    const log = memoryLogger();
    const started = await startController({
      source: { kind: "dir", dir: root },
      api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
      listen: { host: "127.0.0.1", port: 0 },
      selfHeal: false,
      concurrency: 2,
      debounceMs: 30,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
      timeoutMs: 10_000,
      pollIntervalMs: 10,
      maxPollIntervalMs: 50,
      env: process.env,
      logger: log.logger,
    });
    running.push(started);
    await waitFor("first reconcile of every object", () => started.ready());
    await waitFor("queue idle", () => started.status().queue.running === 0);
    expect({ same: await revisions("same"), moved: await revisions("moved") }).toEqual(before);
    expect((await client().deployment("moved")).source_revision_config?.image_uri).toBe("img/moved:hotfix");
    // "moved" has no known base: the log says so, not "drift detected" ("same" was written back above).
    const about = (name: string) =>
      log
        .lines()
        .filter((line) => line.level === 40 && line.object === name)
        .map((line) => String(line.msg));
    expect(about("moved")).toEqual([expect.stringMatching(/^unknown base: kept live's value/)]);
    expect(about("same")).toEqual([]);
  });
});
