import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { api, waitFor } from "../controller/support.js";
import { startHoldingProxy } from "../support/holding-proxy.js";
import { gitIn, prodImage, stopPromotion } from "../support/promotion-repo.js";
import {
  environmentDoc,
  plain,
  runCommand,
  STAGING_KEY,
  startTwoPlanes,
  type TwoPlanes,
} from "../cli/two-planes.js";

// `plumb apply TREE --env staging` is mid-send (its write-ahead intent in TREE/.plumb/status/staging,
// the PATCH landed on the control plane, its answer not yet back), and `plumb promote TREE/saas --to
// prod` read the intent from saas's own store only: staging looked settled (git = live, the revision
// DEPLOYED) and the version still rolling out was written into prod's override. It now reads the
// intents of the stores above and below PATH (docs/environments.md "Promotion"). What promote wrote
// is read back from the file; that the PATCH landed is read on the control plane.

let planes: TwoPlanes;
let root: string;

const agentFile = () => join(root, "saas", "agent.yaml");
const promote = (more: string[] = [], path = join(root, "saas")) =>
  runCommand(promoteCommand, [path, "--to", "prod", "--write", ...more], planes).catch(
    (e: Error & { code?: string }) => ({ out: "", err: e.message, code: e.code }),
  );
/** The flags and the PATH of a case: a last argument that is no flag's value is the PATH. */
const pathOf = (more: string[]): [string[], string?] =>
  more.length % 2 === 1 ? [more.slice(0, -1), more.at(-1)] : [more];
/** prod's override in saas/agent.yaml (after staging's spec). */
const prodOverride = async () => (await readFile(agentFile(), "utf8")).split("environments:")[1] ?? "";

beforeAll(async () => {
  planes = await startTwoPlanes();
  root = await mkdtemp(join(tmpdir(), "plumb-promote-nearby-intent-"));
  await mkdir(join(root, "environments"));
  await mkdir(join(root, "saas"));
  await writeFile(join(root, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(
    join(root, "environments", "prod.yaml"),
    environmentDoc("prod", "  promotion: {from: staging, gates: {deployed: true}}\n"),
  );
  await writeFile(agentFile(), `${plain("agent")}${prodImage("img/agent:0")}`);
  const git = gitIn(root);
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-q", "-m", "init");
  const applied = await runCommand(applyCommand, [root, "--env", "staging", "--yes"], planes);
  if (applied.code !== 0) throw new Error(`apply --env staging failed: ${applied.err}`);
});

afterAll(async () => {
  await rm(`${root}-x`, { recursive: true, force: true });
  await stopPromotion(planes, root);
});

// With --status-dir X promote read X alone, where no apply of the tree writes: PATH's default store
// and those nearby are where an apply without it records its intents (apply --status-dir locks them),
// so their intents are read with --status-dir too (their checks are not: DIR's alone).
it.each([
  { how: "SUBDIR", more: () => [], from: 1 },
  { how: "SUBDIR --status-dir X", more: () => ["--status-dir", `${root}-x`], from: 2 },
  { how: "TREE --status-dir X", more: () => ["--status-dir", `${root}-x`, root], from: 3 },
])(
  "promote $how is blocked while an apply of the tree is sending, and promotes once it is recorded",
  async ({ more, from }) => {
    // staging moves on in git (its spec comes first in the file); prod's override stays behind.
    const [old, next] = [`img/agent:${from}`, `img/agent:${from + 1}`];
    const text = await readFile(agentFile(), "utf8");
    await writeFile(agentFile(), text.replace(`image_uri: "${old}"`, `image_uri: "${next}"`));
    const before = await prodOverride();
    expect(before).not.toContain(next);
    const proxy = await startHoldingProxy(planes.staging.url);
    const client = api(planes.staging.url, STAGING_KEY);
    let answer = () => {};
    try {
      const patch = proxy.hold((method) => method === "PATCH");
      const apply = runCommand(applyCommand, [root, "--env", "staging", "--yes"], planes, {
        STAGING_API_URL: proxy.url,
      });
      const held = await Promise.race([patch, apply.then(() => Promise.reject(new Error("sent no PATCH")))]);
      answer = await held.land(); // the PATCH landed; its answer is kept until `answer()`
      // The control plane has the change and has rolled it out: only the intent says it is in flight.
      await waitFor("staging's new revision DEPLOYED", async () => {
        const live = await client.deployment("agent");
        const image = (live.source_revision_config as { image_uri?: string }).image_uri;
        const latest = (await client.revisions(live.id)).find((r) => r.id === live.latest_revision_id);
        return image === next && latest?.status === "DEPLOYED" && live.active_revision_id === latest.id;
      });
      const blocked = await promote(...pathOf(more()));
      expect(blocked.code, blocked.out).toBe("promotion-blocked");
      expect(blocked.out + blocked.err).toContain(join(root, ".plumb", "status", "staging"));
      expect(await prodOverride()).toBe(before);
      answer();
      expect((await apply).code).toBe(0);
    } finally {
      answer();
      await proxy.close();
    }
    const promoted = await promote(...pathOf(more()));
    expect(promoted.code, promoted.err).toBe(0);
    expect(await prodOverride()).toContain(next);
  },
);

// The checks of one revision recorded in two stores: saas's own (an earlier run that passed) and the
// tree's (a later run on that same revision that failed: a flaky agent, here its case edited). promote
// saas read its own record's checks whatever the tree's said later, and promoted on a verdict since
// overturned. It now judges the latest checks of the revision among its own store and those nearby.
it("promote SUBDIR judges the latest checks of the revision, not its own store's older ones", async () => {
  const tree = await mkdtemp(join(tmpdir(), "plumb-promote-nearby-checks-"));
  const file = join(tree, "saas", "flaky.yaml");
  const manifest = (expect: string) =>
    `${plain("flaky")}  verify:\n    assistant_id: agent\n    cases:\n      - {name: ping, input: ping, expect_contains: ${expect}}\n${prodImage("img/flaky:0")}`;
  const applyAt = (path: string) =>
    runCommand(applyCommand, [path, "--env", "staging", "--yes"], planes).catch((e: Error) => e);
  try {
    await mkdir(join(tree, "environments"));
    await mkdir(join(tree, "saas"));
    await writeFile(join(tree, "environments", "staging.yaml"), environmentDoc("staging"));
    await writeFile(
      join(tree, "environments", "prod.yaml"),
      environmentDoc(
        "prod",
        "  promotion: {from: staging, gates: {deployed: true, checks: {min_pass_ratio: 1}}}\n",
      ),
    );
    gitIn(tree)("init", "-q", "-b", "main");
    await writeFile(file, manifest("nothing-like-this"));
    await applyAt(tree); // fails its checks: the tree's record says so
    await writeFile(file, manifest("pong"));
    await applyAt(join(tree, "saas")); // a no-op re-verified (last check failed): passes, in saas's store
    await writeFile(file, manifest("nothing-like-this"));
    await applyAt(tree); // the same revision verified again, later: fails, in the tree's store
    const client = api(planes.staging.url, STAGING_KEY);
    expect(await client.revisions((await client.deployment("flaky")).id)).toHaveLength(1);
    const run = await runCommand(
      promoteCommand,
      [join(tree, "saas"), "--to", "prod", "--write"],
      planes,
    ).catch((e: Error & { code?: string }) => ({ out: "", err: e.message, code: e.code }));
    expect(run.code, run.out).toBe("promotion-blocked");
    expect(run.err).toContain("0/1 passed");
    expect(await readFile(file, "utf8")).toContain('image_uri: "img/flaky:0"');
  } finally {
    await stopPromotion(undefined, tree);
  }
});
