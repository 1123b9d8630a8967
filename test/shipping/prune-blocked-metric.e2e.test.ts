import { rm } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startController } from "../../src/controller/controller.js";
import { fastControllerOptions, useControllerHarness } from "../controller/harness.js";
import { api, container, waitFor, writeDoc } from "../controller/support.js";

// plumb_prune_blocked_total (the PlumbPruneBlocked alert in examples/kubernetes/alerts.yaml) counts
// the prune sweeps that held deletions back over --prune-max, as the controller serves it.

const h = useControllerHarness("plumb-prune-metric-");

const blockedCount = async (url: string) =>
  Number(/^plumb_prune_blocked_total (\S+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);

it("counts a prune held back over --prune-max, and deletes nothing", async () => {
  for (const name of ["alpha", "beta", "gamma"])
    await writeDoc(h.dir, `${name}.yaml`, container(name, `img/${name}:1`));
  h.controller = await startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      prune: true,
      pruneMax: 1,
      listen: { host: "127.0.0.1", port: 0 },
    }),
  );
  await waitFor("first reconciles", () => h.controller!.ready());
  const url = h.controller.url!;
  expect(await blockedCount(url)).toBe(0);
  await rm(join(h.dir, "beta.yaml"));
  await rm(join(h.dir, "gamma.yaml"));
  await h.controller.rescan();
  await waitFor("plumb_prune_blocked_total counted", async () => (await blockedCount(url)) >= 1);
  const names = (await api(h.cp.url).deployments()).map((d) => d.name).sort();
  expect(names).toEqual(["alpha", "beta", "gamma"]);
});
