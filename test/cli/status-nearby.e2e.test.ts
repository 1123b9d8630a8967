import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { statusCommand } from "../../src/cli/sync/status.js";
import { environmentDoc, plain, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";
import { gitIn, stopPromotion } from "../support/promotion-repo.js";

// `plumb apply TREE` verified saas/flaky and its checks failed: the tree's store says Degraded, with
// the checks. `plumb status TREE/saas` read saas's own store alone, whose record no apply wrote, and
// showed the deployment Healthy, with no checks and nothing applied. It now shows what the stores
// above and below saw later (docs/status.md "Stores above and below"); its own records stay its own.

let planes: TwoPlanes;
let tree: string;

/** Names the environment, so that saas (no Environment of its own) runs with the tree's (docs/environments.md "A directory as PATH"). */
const staging = (name: string, version = 1) =>
  `environments:\n  staging:\n    spec:\n      source_revision_config: {image_uri: "img/${name}:${version}"}\n`;
const manifest = (expect: string, version: number) =>
  `${plain("flaky")}  verify:\n    assistant_id: agent\n    cases:\n      - {name: ping, input: ping, expect_contains: ${expect}}\n${staging("flaky", version)}`;

type Shown = {
  name: string;
  health: string;
  applied_at: string | null;
  checks?: { passed: number; runs: number };
};

const statusOf = async (path: string): Promise<Shown[]> => {
  const run = await runCommand(statusCommand, [path, "--env", "staging", "-o", "json"], planes);
  expect(run.code, run.err).toBe(0);
  return (
    (JSON.parse(run.out) as { environments: Array<{ objects: Shown[] }> }).environments[0]?.objects ?? []
  );
};

beforeAll(async () => {
  planes = await startTwoPlanes();
  tree = await mkdtemp(join(tmpdir(), "plumb-status-nearby-"));
  await mkdir(join(tree, "environments"));
  await mkdir(join(tree, "saas"));
  await writeFile(join(tree, "environments", "staging.yaml"), environmentDoc("staging"));
  gitIn(tree)("init", "-q", "-b", "main");
});

afterAll(() => stopPromotion(planes, tree));

it("status SUBDIR shows the checks and health an apply of the tree recorded later", async () => {
  const file = join(tree, "saas", "flaky.yaml");
  await writeFile(file, manifest("pong", 1));
  // saas's own store first: an apply there that passed its checks.
  const first = await runCommand(applyCommand, [join(tree, "saas"), "--env", "staging", "--yes"], planes);
  expect(first.code, first.err).toBe(0);
  const [passed] = await statusOf(join(tree, "saas"));
  expect(passed?.health).toBe("Healthy");
  // Then the tree, later, a new version whose checks fail.
  await writeFile(file, manifest("nothing-like-this", 2));
  const failed = await runCommand(applyCommand, [tree, "--env", "staging", "--yes"], planes).catch(
    (e: Error) => ({ code: "thrown", err: e.message, out: "" }),
  );
  expect(failed.code).not.toBe(0);
  const [inTree] = await statusOf(tree);
  expect(inTree?.health).toBe("Degraded");
  const [inSaas] = await statusOf(join(tree, "saas"));
  expect(inSaas?.health).toBe("Degraded");
  expect(inSaas?.checks).toMatchObject({ runs: 1, passed: 0 });
  expect(inSaas?.applied_at).toBe(inTree?.applied_at);
});

it("status SUBDIR of an object only the tree applied shows that apply", async () => {
  await writeFile(join(tree, "saas", "other.yaml"), `${plain("other")}${staging("other")}`);
  const applied = await runCommand(
    applyCommand,
    [tree, "--env", "staging", "--yes", "--target", "other"],
    planes,
  );
  expect(applied.code, applied.err).toBe(0);
  const other = (await statusOf(join(tree, "saas"))).find((o) => o.name === "other");
  expect(other?.health).toBe("Healthy");
  expect(other?.applied_at).not.toBeNull();
});
