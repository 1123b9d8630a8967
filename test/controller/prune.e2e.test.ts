import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { fastControllerOptions, useControllerHarness } from "./harness.js";
import { container, memoryLogger, waitFor, writeDoc } from "./support.js";

// controller --prune: a managed deployment whose manifest is removed is deleted and its record
// dropped; a deployment made by hand is never touched; more than --prune-max in one scan deletes
// nothing; without --prune nothing is deleted.

const h = useControllerHarness("plumb-ctl-prune-");

const exists = async (name: string) => {
  const res = await fetch(`${h.cp.url}/v2/deployments?name_contains=${name}`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  return ((await res.json()) as { resources: Array<{ name: string }> }).resources.some(
    (d) => d.name === name,
  );
};

async function setUp(prune: boolean, pruneMax?: number) {
  for (const name of ["alpha", "beta", "gamma"])
    await writeDoc(h.dir, `${name}.yaml`, container(name, `img/${name}:1`));
  await fetch(`${h.cp.url}/v2/deployments`, {
    method: "POST",
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
    body: JSON.stringify({
      name: "manual",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "img/manual:1" },
      secrets: [],
    }),
  });
  const log = memoryLogger();
  h.controller = await startController(
    fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir }, prune, pruneMax, logger: log.logger }),
  );
  await waitFor("ready", () => h.controller!.ready());
  return log;
}

it("deletes a managed deployment once its manifest is removed, never the unmanaged one", async () => {
  await setUp(true);
  await rm(join(h.dir, "beta.yaml"));
  await h.controller!.rescan();
  await waitFor("beta pruned", async () => !(await exists("beta")));
  expect(
    h
      .controller!.status()
      .objects.map((o) => o.name)
      .sort(),
  ).toEqual(["alpha", "gamma"]);
  expect(await exists("manual")).toBe(true);
  expect(await exists("alpha")).toBe(true);
});

it("prunes nothing when a scan would delete more than --prune-max, or without --prune", async () => {
  const log = await setUp(true, 1);
  await rm(join(h.dir, "beta.yaml"));
  await rm(join(h.dir, "gamma.yaml"));
  await h.controller!.rescan();
  await waitFor("the refusal logged", () => log.text().includes("prune-limit"));
  expect(await exists("beta")).toBe(true);
  expect(await exists("gamma")).toBe(true);
  await h.controller!.stop(1_000);

  h.controller = await startController(
    fastControllerOptions(h.cp, { source: { kind: "dir", dir: h.dir }, prune: false }),
  );
  await waitFor("ready", () => h.controller!.ready());
  await h.controller.rescan();
  expect(await exists("beta")).toBe(true);
});

it("a removed OrganizationAccess is no longer managed: its record is dropped, nothing is sent", async () => {
  // An organization cannot be deleted; its record stayed in the store for ever.
  await writeDoc(
    h.dir,
    "org.yaml",
    "apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata:\n  name: acme\nspec:\n  invites_enabled: false\n",
  );
  const log = await setUp(true);
  const kinds = () => h.controller!.status().objects.map((o) => `${o.kind}/${o.name}`);
  await waitFor("the organization applied", () => kinds().includes("OrganizationAccess/acme"));
  await rm(join(h.dir, "org.yaml"));
  await h.controller!.rescan();
  await waitFor("the organization released", () => !kinds().includes("OrganizationAccess/acme"));
  expect(log.text()).toContain("no longer managed: manifest removed from git");
  const info = await fetch(`${h.cp.url}/api/v1/organizations/current/info`, {
    headers: { authorization: `Bearer ${DEFAULT_API_KEY}` },
  });
  expect(((await info.json()) as { invites_enabled: boolean }).invites_enabled).toBe(false);
  expect(await exists("alpha")).toBe(true);
});
