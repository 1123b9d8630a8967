import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { useGitControllerHarness } from "./harness.js";
import { gitIn } from "../support/git-clones.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// A record git tracks is not plumb's (docs/status.md "Records are state, never manifests"). A
// controller following a branch reads its store when it starts; a commit pulled later can bring a
// record into that store (the checkout's `--path/.plumb/status/`), naming a deployment plumb never
// made. With --prune, trusting it would delete that deployment. Counted on the control plane: it
// stays while the controller runs past the commit, and after a restart on the same checkout.

const h = useGitControllerHarness("plumb-ctl-tracked-");

const start = (log: ReturnType<typeof memoryLogger>) =>
  h.start({ prune: true, env: { PATH: process.env.PATH, HOME: process.env.HOME }, logger: log.logger });

it("a record a pulled commit brings into the controller's store is never trusted: --prune deletes nothing it names", async () => {
  const { cp, tmp, work } = h;
  const client = api(cp.url);
  const first = memoryLogger();
  h.controller = await start(first);
  await waitFor("ready", () => h.controller!.ready());
  const victim = await client.call<{ id: string }>("POST", "/v2/deployments", {
    name: "victim",
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: "img/victim:1" },
    secrets: [],
  });
  // The commit: the controller's own record for alpha, renamed to the victim, and a change to alpha
  // (so the test sees when the controller has the commit).
  const own = join(tmp, "checkout", "deploy", ".plumb", "status", "deployment.alpha.json");
  const forged = {
    ...(JSON.parse(await readFile(own, "utf8")) as object),
    name: "victim",
    id: victim.id,
    manifest_file: "victim.yaml",
  };
  await writeDoc(join(work, "deploy", ".plumb", "status"), "deployment.victim.json", JSON.stringify(forged));
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:2"));
  await gitIn(work, "add", "-A");
  await gitIn(work, "commit", "-m", "alpha 2, and .plumb/");
  await gitIn(work, "push", "origin", "main");
  const image = async () => (await client.deployment("alpha")).source_revision_config?.image_uri;
  await waitFor("the commit applied", async () => (await image()) === "img/alpha:2");
  await waitFor("the tracked record said", () => first.text().includes("deployment.victim.json"));
  expect((await client.deployments()).map((d) => d.name).sort()).toEqual(["alpha", "victim"]);

  // Restarted on the same checkout: the record is there, tracked, and still not trusted.
  await h.controller.stop(1_000);
  const second = memoryLogger();
  h.controller = await start(second);
  await waitFor("ready again", () => h.controller!.ready());
  expect(second.text()).toContain("tracked by git");
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:3"));
  await gitIn(work, "commit", "-qam", "alpha 3");
  await gitIn(work, "push", "origin", "main");
  await waitFor("the next commit applied", async () => (await image()) === "img/alpha:3");
  expect((await client.deployments()).map((d) => d.name).sort()).toEqual(["alpha", "victim"]);
}, 60_000);
