import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { runApply } from "../../src/cli/sync/apply.js";
import { startController } from "../../src/controller/controller.js";
import type { ControllerOptions } from "../../src/controller/controller-types.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { applyFlags, captureIo } from "../cli/reconcile-helpers.js";
import { fastControllerOptions, useControllerHarness } from "../controller/harness.js";
import { startReceiver } from "../controller/notify-receiver.js";
import { container, memoryLogger, waitFor, writeDoc } from "../controller/support.js";

// issue 23 [safety], the prune cases under controller --prune, counted on the control plane (the
// deployments it still lists): removals in a stream or in batches never delete more than
// --prune-max per --prune-window, across scans and restarts; a removal is deleted only once seen
// again after --prune-delay; an emptied file or an empty tree deletes nothing.

const h = useControllerHarness("plumb-chaos-prune-");

const liveIds = async (): Promise<Map<string, string>> => {
  const res = await fetch(`${h.cp.url}/v2/deployments?limit=100`, {
    headers: { "x-api-key": DEFAULT_API_KEY },
  });
  const body = (await res.json()) as { resources: Array<{ name: string; id: string }> };
  return new Map(body.resources.map((d) => [d.name, d.id]));
};
const live = async (): Promise<string[]> => [...(await liveIds()).keys()].sort();

const names = (n: number) => Array.from({ length: n }, (_, i) => `svc${String(i).padStart(2, "0")}`);

async function start(over: Partial<ControllerOptions> = {}) {
  const log = memoryLogger();
  h.controller = await startController(
    fastControllerOptions(h.cp, {
      source: { kind: "dir", dir: h.dir },
      prune: true,
      pruneMax: 5,
      logger: log.logger,
      ...over,
    }),
  );
  await waitFor("ready", () => h.controller!.ready());
  return log;
}

/** `n` deployments svc00.. plus `keep`, created by the controller. */
async function deploy(n: number, over: Partial<ControllerOptions> = {}) {
  await writeDoc(h.dir, "keep.yaml", container("keep", "img/keep:1"));
  for (const name of names(n)) await writeDoc(h.dir, `${name}.yaml`, container(name, `img/${name}:1`));
  const log = await start(over);
  await waitFor("all created", async () => (await live()).length === n + 1);
  return log;
}

it("12 removals one scan apart delete at most 5 in the window, across a restart; prune-blocked names what waits", async () => {
  const receiver = await startReceiver();
  try {
    const log = await deploy(12, {
      notify: { urls: [receiver.url] },
      listen: { host: "127.0.0.1", port: 0 },
    });
    for (const name of names(12)) {
      await rm(join(h.dir, `${name}.yaml`));
      await h.controller!.rescan();
    }
    await waitFor("the refusal logged", () => log.text().includes("prune-limit"));
    expect(await live()).toHaveLength(13 - 5);
    await waitFor("prune-blocked sent", () => receiver.events().some((e) => e.event === "prune-blocked"));
    const blocked = receiver.events().find((e) => e.event === "prune-blocked")!;
    expect(blocked.message).toMatch(/more than --prune-max 5 per --prune-window 1h/);
    // The status page shows each waiting object's last activity as prune-blocked.
    const waiting = names(12).find((name) => String(blocked.message).includes(name))!;
    const detail = (await (
      await fetch(`${h.controller!.url}/ui/api/objects/Deployment/${waiting}`)
    ).json()) as {
      object: { last_reconcile: { result: string } | null };
    };
    expect(detail.object.last_reconcile?.result).toBe("prune-blocked");

    // A restart reads the ledger: the budget is still spent.
    await h.controller!.stop(1_000);
    const again = await start();
    await h.controller!.rescan();
    await waitFor("the refusal logged again", () => again.text().includes("prune-limit"));
    expect(await live()).toHaveLength(8);

    // An operator lifts it explicitly (the controller holds the state lock: stopped first).
    await h.controller!.stop(1_000);
    h.controller = undefined;
    const io = captureIo(h.cp);
    expect(await runApply(h.dir, applyFlags({ prune: true, pruneMax: 7 }), io)).toBe(0);
    expect(await live()).toEqual(["keep"]);
  } finally {
    await receiver.close();
  }
});

it("three batches of 4 removals delete no more than 5 in the window", async () => {
  const log = await deploy(12);
  // Each batch leaves in one rename of its directory: removed one file at a time, a loaded run's
  // file event could scan between two of them and split a batch (a second batch's first removal
  // then fits the one place left). A file moved by rename is defined at every moment.
  const batchDir = (batch: number) => join(h.dir, `batch-${batch}`);
  for (let batch = 0; batch < 3; batch++) {
    await mkdir(batchDir(batch));
    for (const name of names(12).slice(batch * 4, batch * 4 + 4))
      await rename(join(h.dir, `${name}.yaml`), join(batchDir(batch), `${name}.yaml`));
  }
  await h.controller!.rescan();
  expect(await live()).toHaveLength(13); // moved, not removed
  for (let batch = 0; batch < 3; batch++) {
    await rename(batchDir(batch), `${h.dir}-removed-${batch}`);
    await h.controller!.rescan();
    await rm(`${h.dir}-removed-${batch}`, { recursive: true });
  }
  await waitFor("the refusal logged", () => log.text().includes("prune-limit"));
  const deleted = 13 - (await live()).length;
  expect(deleted).toBeLessThanOrEqual(5);
  expect(deleted).toBe(4); // the first batch fits; the next one (4 > 1 left) waits whole
});

it("a removal is deleted only once seen again after --prune-delay; one restored meanwhile never is", async () => {
  // The restore below must come within the delay: 400 ms left a loaded machine too little for a
  // listing, a write and a rescan (svc01 pruned before it was back). 3 s.
  const log = await deploy(2, { pruneDelayMs: 3_000 });
  await rm(join(h.dir, "svc00.yaml"));
  await rm(join(h.dir, "svc01.yaml"));
  const firstSeen = Date.now(); // before the rescan that first sees them: a bound the prune cannot beat
  await h.controller!.rescan();
  expect(await live()).toEqual(["keep", "svc00", "svc01"]);
  await writeDoc(h.dir, "svc01.yaml", container("svc01", "img/svc01:1")); // a checkout glitch, undone
  await h.controller!.rescan();
  // The sweep scans again by itself once the delay has passed.
  await waitFor("svc00 pruned", async () => !(await live()).includes("svc00"));
  expect(Date.now() - firstSeen).toBeGreaterThanOrEqual(3_000);
  expect(await live()).toEqual(["keep", "svc01"]);
  expect(log.text()).toContain("wait to be seen again");
});

const EMPTIED = {
  truncated: "",
  comments: "# moved?\n",
  separators: "---\n",
  lfs: `version https://git-lfs.github.com/spec/v1\noid sha256:${"ab".repeat(32)}\nsize 99\n`,
  conflict: "<<<<<<< HEAD\n",
};

it("emptied files and an empty tree delete nothing; the file restored, nothing was re-created", async () => {
  const log = await deploy(5);
  const ids = await liveIds();
  const texts = Object.values(EMPTIED);
  for (const [i, name] of names(5).entries()) await writeFile(join(h.dir, `${name}.yaml`), texts[i]!);
  await h.controller!.rescan();
  await waitFor("manifest-emptied logged", () => log.text().includes("manifest-emptied"));
  expect(await live()).toHaveLength(6);
  // Nothing at all defined: never a prune, whatever the records say. (Each file event scans at
  // once: `keep` goes first, so every tree on the way still holds an emptied file. Gone last, a
  // scan between it and the last emptied file saw keep alone and, --prune-delay 0, pruned the five.)
  for (const name of ["keep", ...names(5)]) await rm(join(h.dir, `${name}.yaml`));
  await h.controller!.rescan();
  await waitFor("prune skipped", () => log.text().includes("the manifests define no object"));
  expect(await live()).toHaveLength(6);
  // Restored: the same deployments (ids), none deleted and re-created. All six appear in one
  // rename: restored one by one, a loaded run's scan after the first saw svc00 alone and pruned
  // the other five, as --prune-delay 0 says it should.
  const restored = `${h.dir}-restored`;
  for (const name of [...names(5), "keep"])
    await writeDoc(restored, `${name}.yaml`, container(name, `img/${name}:1`));
  await rename(restored, join(h.dir, "restored"));
  await h.controller!.rescan();
  expect(await liveIds()).toEqual(ids);
});
