import { writeFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { gatedClock } from "../support/fake-clock.js";
import { type Controller, startController } from "../../src/controller/controller.js";
import { signBody } from "../../src/controller/source/webhook.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

let dir: string;
let cp: RunningControlPlane;
const running: Controller[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  for (const c of running.splice(0)) await c.stop(1_000);
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The local control plane's time, frozen until open(): revisions stay in their first state (the
 * controller's first reconcile keeps waiting for DEPLOYED) for as long as the test needs.
 */

async function start(extra: { selfHeal?: boolean; webhookSecret?: string } = {}) {
  const log = memoryLogger();
  const controller = await startController({
    source: { kind: "dir", dir },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    listen: { host: "127.0.0.1", port: 0 },
    selfHeal: extra.selfHeal ?? false,
    webhookSecret: extra.webhookSecret,
    concurrency: 4,
    debounceMs: 30,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: { ...process.env, TOKEN_FROM_ENV: "t0ps3cret-value" },
    logger: log.logger,
  });
  running.push(controller);
  return {
    controller,
    log,
    http: (path: string, init?: RequestInit) => fetch(`${controller.url}${path}`, init),
  };
}

const image = async (name: string) =>
  (
    await api(cp.url)
      .deployment(name)
      .catch(() => null)
  )?.source_revision_config?.image_uri;

describe("controller on a directory", () => {
  it("reconciles at start, then only the edited object; a burst of saves is one revision", async () => {
    await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
    await writeDoc(
      dir,
      "b.yaml",
      container("beta", "img/beta:1", { secrets: [{ name: "TOKEN", valueFrom: { env: "TOKEN_FROM_ENV" } }] }),
    );
    const { controller, log, http } = await start();
    await waitFor("ready", () => controller.ready());
    expect((await http("/readyz")).status).toBe(200);
    const status = controller.status();
    expect(status.objects.map((o) => [o.name, o.sync, o.health])).toEqual([
      ["alpha", "Synced", "Healthy"],
      ["beta", "Synced", "Healthy"],
    ]);
    const client = api(cp.url);
    const beta = await client.deployment("beta");
    const betaRevisions = (await client.revisions(beta.id)).length;

    // Five saves in a row (a script, an editor's save-all): one rescan after they settle, one revision.
    for (let i = 2; i <= 6; i++)
      writeFileSync(join(dir, "a.yaml"), stringify(container("alpha", `img/alpha:${i}`)));
    await waitFor("alpha at img/alpha:6", async () => (await image("alpha")) === "img/alpha:6");
    await waitFor(
      "alpha synced",
      () =>
        controller.status().objects.find((o) => o.name === "alpha")?.revision_status === "DEPLOYED" &&
        controller.status().queue.running === 0,
    );
    const alpha = await client.deployment("alpha");
    expect((await client.revisions(alpha.id)).length).toBe(2); // create + one for the whole burst
    expect((await client.revisions(beta.id)).length).toBe(betaRevisions);

    const metrics = await (await http("/metrics")).text();
    expect(metrics).toMatch(/plumb_reconcile_total\{reason="change",result="applied"\} [1-9]/);
    expect(metrics).toMatch(
      /plumb_api_requests_total\{method="PATCH",route="\/v2\/deployments\/\{id\}",code="200"\} 1/,
    );
    expect(metrics).toMatch(/plumb_objects\{sync="Synced",health="Healthy"\} 2/);
    // Every reconcile line names the object, its id and revision; the secret never appears.
    const reconciled = log.lines().filter((l) => l.msg === "reconciled");
    expect(reconciled.length).toBeGreaterThanOrEqual(3);
    for (const line of reconciled)
      expect(line).toMatchObject({
        name: expect.any(String),
        id: expect.any(String),
        revision: expect.any(String),
      });
    expect(log.text()).not.toContain("t0ps3cret-value");
    expect(JSON.stringify(controller.status())).not.toContain("t0ps3cret-value");
  });

  it("/readyz answers 200 while the first reconcile waits for DEPLOYED; /status and plumb_settled say when it settled", async () => {
    await cp.stop();
    const clock = gatedClock();
    cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0, clock });
    await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
    const { controller, http } = await start();
    // The deployment and its revision exist, the revision cannot advance: the reconcile is in flight.
    const client = api(cp.url);
    const alpha = await waitFor("alpha created", () => client.deployment("alpha"));
    const [revision] = await waitFor("a revision", async () => {
      const list = await client.revisions(alpha.id);
      return list.length > 0 ? list : undefined;
    });
    expect(revision!.status).not.toBe("DEPLOYED");
    expect(controller.status().queue.running).toBe(1);
    // Ready (the manifests are loaded): the Service keeps routing the page and the webhook.
    expect((await http("/readyz")).status).toBe(200);
    expect(controller.status()).toMatchObject({ ready: true, settled: false });
    expect(await (await http("/metrics")).text()).toMatch(/^plumb_settled 0$/m);
    expect(controller.ready()).toBe(false); // the API's ready(): every first reconcile finished
    expect((await http("/livez")).status).toBe(200);

    clock.open();
    await waitFor("ready", () => controller.ready());
    expect(controller.status()).toMatchObject({ ready: true, settled: true });
    // Prometheus sees it too, without asking /status for every record (bench/controller-memory).
    expect(await (await http("/metrics")).text()).toMatch(/^plumb_settled 1$/m);
    expect(controller.status().objects.map((o) => [o.name, o.sync, o.revision_status])).toEqual([
      ["alpha", "Synced", "DEPLOYED"],
    ]);
  });

  it("keeps reconciling the others while one manifest is invalid, and reports it until fixed", async () => {
    await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
    await writeDoc(dir, "b.yaml", container("beta", "img/beta:1"));
    const { controller, log, http } = await start();
    await waitFor("ready", () => controller.ready());
    await writeFile(
      join(dir, "b.yaml"),
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: beta}\nspec: {source: nope}\n",
    );
    await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:2"));
    await waitFor("alpha updated", async () => (await image("alpha")) === "img/alpha:2");
    await waitFor("beta reported invalid", () =>
      controller.status().invalid.some((i) => i.file === "b.yaml"),
    );
    expect(controller.status().objects.find((o) => o.name === "beta")).toMatchObject({
      sync: "Failed",
      last_error: expect.stringContaining("b.yaml:"),
    });
    expect(await (await http("/metrics")).text()).toMatch(/plumb_invalid_manifest_files 1/);
    expect(
      log
        .lines()
        .some((l) => l.msg === "invalid manifest: not reconciled until fixed" && l.file === "b.yaml"),
    ).toBe(true);

    await writeDoc(dir, "b.yaml", container("beta", "img/beta:3"));
    await waitFor("beta fixed and applied", async () => (await image("beta")) === "img/beta:3");
    await waitFor("invalid cleared", () => controller.status().invalid.length === 0);
  });

  it("reports drift without touching live, and self-heals when asked", async () => {
    await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
    const { controller, http } = await start();
    await waitFor("ready", () => controller.ready());
    const client = api(cp.url);
    const alpha = await client.deployment("alpha");
    await client.call("PATCH", `/v2/deployments/${alpha.id}`, {
      source_revision_config: { image_uri: "img/alpha:hotfix" },
    });

    await controller.checkDrift();
    await waitFor("drift reported", () => controller.status().objects[0]?.sync === "OutOfSync");
    await waitFor("queue idle", () => controller.status().queue.running === 0);
    expect(await image("alpha")).toBe("img/alpha:hotfix");
    expect(await (await http("/metrics")).text()).toMatch(
      /plumb_drift_detected_total\{kind="Deployment",reason="differs"\} 1/,
    );
    await controller.stop(1_000);

    const healer = await start({ selfHeal: true });
    await waitFor("healer ready", () => healer.controller.ready());
    // Its first reconcile already puts git's version back; a drift check finds nothing more.
    await waitFor("git's image back", async () => (await image("alpha")) === "img/alpha:1");
    await client.call("PATCH", `/v2/deployments/${alpha.id}`, {
      source_revision_config: { image_uri: "img/alpha:again" },
    });
    await waitFor("deployed", async () => {
      const d = await client.deployment("alpha");
      return d.latest_revision_id === d.active_revision_id;
    });
    await healer.controller.checkDrift();
    await waitFor("self-healed", async () => (await image("alpha")) === "img/alpha:1");
    expect(await (await healer.http("/metrics")).text()).toMatch(
      /plumb_drift_detected_total\{kind="Deployment",reason="differs"\} 1/,
    );
  });

  it("accepts a correctly signed webhook and refuses a bad signature", async () => {
    await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
    const { controller, http } = await start({ webhookSecret: "hook-secret" });
    await waitFor("ready", () => controller.ready());
    const body = JSON.stringify({ ref: "refs/heads/main" });
    const post = (signature: string | undefined) =>
      http("/hooks/git", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(signature ? { "x-hub-signature-256": signature } : {}),
        },
        body,
      });
    expect((await post(signBody("wrong", body))).status).toBe(401);
    expect((await post(undefined)).status).toBe(401);
    expect((await post(signBody("hook-secret", body))).status).toBe(202);
    expect((await http("/healthz")).status).toBe(200);
    expect((await http("/nope")).status).toBe(404);
  });
});
