import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { fastControllerOptions } from "./harness.js";
import { api, waitFor, writeDoc } from "./support.js";

// The controller, as plan: a record's fingerprints speak of the deployment whose id it names
// (docs/status.md "A record speaks of one deployment"). A deployment deleted and created again
// outside plumb under the same name, with other secret values, is not taken as in sync.

let dir: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-recreated-controller-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

const manifest = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: alpha
spec:
  source: internal_container
  source_revision_config: {image_uri: "img/alpha:1"}
  secrets:
    - {name: MODE, value: fast}
`;

/** Deletes alpha and creates one of the same name with another MODE, as someone without plumb would. */
async function recreateOutsidePlumb(client: ReturnType<typeof api>): Promise<{ id: string }> {
  await client.call("DELETE", `/v2/deployments/${(await client.deployment("alpha")).id}`);
  return client.call<{ id: string }>("POST", "/v2/deployments", {
    name: "alpha",
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: "img/alpha:1" },
    secrets: [{ name: "MODE", value: "slow" }],
  });
}

it("does not report a deployment created again outside plumb, with other secrets, as in sync", async () => {
  await writeDoc(dir, "a.yaml", manifest);
  controller = await startController(
    fastControllerOptions(cp, { source: { kind: "dir", dir }, selfHeal: true }),
  );
  await waitFor("ready", () => controller!.ready());
  const client = api(cp.url);
  const recreated = await recreateOutsidePlumb(client);

  await controller.checkDrift();
  // Self-healing: git's secrets are sent to the new deployment (one revision), and recorded for it.
  await waitFor("secrets sent to the recreated deployment", async () => {
    return (await client.revisions(recreated.id)).length === 2;
  });
  await waitFor("queue idle", () => controller!.status().queue.running === 0);
  expect(controller.status().objects[0]).toMatchObject({ id: recreated.id, sync: "Synced" });
});

it("without self-heal, reports it out of sync and sends nothing", async () => {
  await writeDoc(dir, "a.yaml", manifest);
  controller = await startController(fastControllerOptions(cp, { source: { kind: "dir", dir } }));
  await waitFor("ready", () => controller!.ready());
  const client = api(cp.url);
  const recreated = await recreateOutsidePlumb(client);
  await waitFor("deployed", async () => (await client.deployment("alpha")).active_revision_id !== null);
  await controller.checkDrift();
  await waitFor("queue idle", () => controller!.status().queue.running === 0);
  // Was "Synced": the old deployment's fingerprints matched git, so the rogue values stood unseen.
  // Nothing applied to it is known; which file defines it still is (a prune scoped to a file sees it).
  expect(controller.status().objects[0]).toMatchObject({
    id: recreated.id,
    sync: "OutOfSync",
    applied_at: null,
    manifest_file: "a.yaml",
  });
  expect((await client.revisions(recreated.id)).length).toBe(1);
});
