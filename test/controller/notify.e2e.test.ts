import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { signNotification } from "../../src/controller/notify/notifier.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { startReceiver } from "./notify-receiver.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// controller --notify against a local receiver: what is sent for creates, drift and prunes, that a
// failing object is one message (not one per retry), and that a dead receiver never holds reconciles.

const h = useControllerHarness("plumb-ctl-notify-");
const receivers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

const of = (events: Array<Record<string, unknown>>, name: string) =>
  events.filter((e) => (e.object as { name?: string } | null)?.name === name).map((e) => e.event);

it("announces creates, drift and prunes, signed, with a link to the object on the status page", async () => {
  const r = await startReceiver();
  receivers.push(r);
  for (const name of ["alpha", "beta"])
    await writeDoc(h.dir, `${name}.yaml`, container(name, `img/${name}:1`));
  h.controller = await startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      listen: { host: "127.0.0.1", port: 0 },
      prune: true,
      notify: { urls: [r.url], secret: "n0tify" },
    }),
  );
  const controller = h.controller;
  await waitFor("both created and announced", () => r.deliveries.length === 2);
  expect(of(r.events(), "alpha")).toEqual(["applied"]);
  const alpha = r.events().find((e) => (e.object as { name: string }).name === "alpha")!;
  expect(alpha).toMatchObject({ message: "created", link: `${controller.url}/#/object/Deployment/alpha` });
  for (const d of r.deliveries)
    expect(d.headers["x-plumb-signature"]).toBe(signNotification("n0tify", d.body));

  const live = await api(h.cp.url).deployment("alpha");
  await api(h.cp.url).call("PATCH", `/v2/deployments/${live.id}`, {
    source_revision_config: { image_uri: "img/alpha:hotfix" },
  });
  await controller.checkDrift();
  await waitFor("drift announced", () => of(r.events(), "alpha").includes("drift-detected"));
  expect(r.events().find((e) => e.event === "drift-detected")).toMatchObject({
    fields: ["source_revision_config.image_uri"],
    id: live.id,
  });

  await rm(join(h.dir, "beta.yaml"));
  await controller.rescan();
  await waitFor("prune announced", () => of(r.events(), "beta").includes("pruned"));
  // No secret value, API key or token in any event.
  expect(r.deliveries.map((d) => d.body).join("\n")).not.toMatch(/plumb-local-key|n0tify/);
});

it("sends one failure per failing streak, not one per retry", async () => {
  const r = await startReceiver();
  receivers.push(r);
  await writeDoc(h.dir, "alpha.yaml", container("alpha", "img/alpha:1"));
  const log = memoryLogger();
  const options = fastControllerOptions(h.cp, {
    source: { kind: "dir", dir: h.dir },
    notify: { urls: [r.url] },
    logger: log.logger,
  });
  h.controller = await startController({ ...options, api: { ...options.api, apiKey: "wrong-key" } });
  const failures = () => log.lines().filter((l) => l.msg === "reconcile failed").length;
  await waitFor("five failed attempts", () => failures() >= 5 && r.deliveries.length >= 1, 30_000);
  expect(r.events().map((e) => e.event)).toEqual(["failed"]);
  expect(String(r.events()[0]!.message)).toMatch(/401|key/i);
});

it("keeps reconciling while the receiver never answers", async () => {
  const r = await startReceiver(() => "hang");
  receivers.push(r);
  await writeDoc(h.dir, "alpha.yaml", container("alpha", "img/alpha:1"));
  h.controller = await startController(
    fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir }, notify: { urls: [r.url] } }),
  );
  await waitFor("ready", () => h.controller!.ready());
  await writeDoc(h.dir, "alpha.yaml", container("alpha", "img/alpha:2"));
  await h.controller.rescan();
  await waitFor(
    "the edit applied",
    async () => (await api(h.cp.url).deployment("alpha")).source_revision_config?.image_uri === "img/alpha:2",
  );
  expect(r.deliveries.length).toBeGreaterThanOrEqual(1);
});
