import { mkdir, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Controller, startController } from "../../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import { api, container, internalSource, memoryLogger, waitFor } from "../support.js";

// A writer that writes one manifest in two pieces with a pause between them longer than the
// debounce (a generator's output, a slow copy). Its first piece is a manifest that parses and
// validates, only with an image cut short. The controller's scan comes during the pause: it must
// not use the prefix. Counted on the local control plane: one deployment, one revision, the whole
// file's image. The pause is the test's own: the second piece is written once the controller's
// /metrics show a watch scan after the first (put off, with the fix; applied, without).

let dir: string;
let cp: RunningControlPlane;
const running: Controller[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-read-at-rest-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop(1_000);
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The settle time: far longer than the test's pause between observing the scan and writing on. */
const SETTLE_MS = 3_000;

async function start() {
  const log = memoryLogger();
  const controller = await startController({
    source: { kind: "dir", dir },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    listen: { host: "127.0.0.1", port: 0 },
    selfHeal: false,
    webhookSecret: undefined,
    concurrency: 4,
    debounceMs: 30,
    settleMs: SETTLE_MS,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: process.env,
    logger: log.logger,
  });
  running.push(controller);
  return { controller, log };
}

/** Watch scans so far, whatever their result, from the controller's /metrics. */
async function watchScans(controller: Controller): Promise<Record<string, number>> {
  const text = await (await fetch(`${controller.url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const m of text.matchAll(/plumb_manifest_scans_total\{source="watch",result="(\w+)"\} (\d+)/g))
    counts[m[1]!] = Number(m[2]);
  return counts;
}
const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

it("a manifest written in two pieces with a pause is applied once, as the whole file says", async () => {
  const { controller } = await start();
  await waitFor("ready", () => controller.ready());
  const whole = stringify(container("app", "registry.example/team/app:v2"));
  const cut = whole.indexOf("team/app:v2") + "team/a".length;
  const prefix = whole.slice(0, cut); // ends in `image_uri: registry.example/team/a`: valid
  expect(prefix).toMatch(/image_uri: registry\.example\/team\/a$/);
  const before = total(await watchScans(controller));

  const file = await open(join(dir, "app.yaml"), "w");
  try {
    await file.write(prefix);
    // The pause: until the controller has scanned the tree holding the prefix.
    await waitFor("a watch scan of the prefix", async () => total(await watchScans(controller)) > before);
    await file.write(whole.slice(cut));
  } finally {
    await file.close();
  }

  const client = api(cp.url);
  const deployed = await waitFor("app deployed", async () => {
    const app = await client.deployment("app").catch(() => null);
    return app?.source_revision_config?.image_uri === "registry.example/team/app:v2" &&
      controller.status().objects.find((o) => o.name === "app")?.revision_status === "DEPLOYED"
      ? app
      : null;
  });
  await waitFor("the queue idle", () => controller.status().queue.running === 0);
  expect((await client.deployments()).map((d) => d.name)).toEqual(["app"]);
  const revisions = await client.revisions(deployed.id);
  expect(revisions.map((r) => r.source_revision_config?.image_uri ?? null)).toEqual([
    "registry.example/team/app:v2",
  ]);
  expect((await watchScans(controller)).deferred).toBeGreaterThan(0);
}, 30_000);

it("an internal_source file written in two pieces with a pause is uploaded once, whole", async () => {
  const source = join(dir, "agent");
  await mkdir(join(source, "src"), { recursive: true });
  await writeFile(join(source, "package.json"), '{"name": "agent", "type": "module"}\n');
  await writeFile(join(source, "langgraph.json"), '{"graphs": {"agent": "./src/agent.ts:graph"}}\n');
  await writeFile(join(source, "src", "agent.ts"), 'export const version = "1";\n');
  await writeFile(join(dir, "docs.yaml"), stringify(internalSource("docs", "./agent")));
  const { controller } = await start();
  await waitFor("ready", () => controller.ready());
  const docs = () => controller.status().objects.find((o) => o.name === "docs");
  await waitFor("docs deployed", () => docs()?.revision_status === "DEPLOYED");
  const client = api(cp.url);
  const id = (await client.deployment("docs")).id;
  const first = docs()!.source_upload!.digest;
  const revisionsAtStart = (await client.revisions(id)).length; // a create, then its upload
  const before = total(await watchScans(controller));

  const whole = 'export const version = "2";\nexport const tools = ["search", "fetch"];\n';
  const cut = whole.indexOf('"fetch"'); // a prefix that is still a file: the list cut short
  const file = await open(join(source, "src", "agent.ts"), "w");
  try {
    await file.write(whole.slice(0, cut));
    await waitFor("a watch scan of the prefix", async () => total(await watchScans(controller)) > before);
    await file.write(whole.slice(cut));
  } finally {
    await file.close();
  }

  await waitFor("the whole file deployed", () => {
    const now = docs();
    return now?.source_upload?.digest !== first && now?.revision_status === "DEPLOYED";
  });
  await waitFor("the queue idle", () => controller.status().queue.running === 0);
  // One revision more, for the whole file: none for the prefix.
  const revisions = await client.revisions(id);
  expect(revisions).toHaveLength(revisionsAtStart + 1);
  expect(revisions[0]!.source_revision_config?.source_tarball_path).toBe(docs()!.source_upload!.object_path);
  expect((await watchScans(controller)).deferred).toBeGreaterThan(0);
}, 30_000);
