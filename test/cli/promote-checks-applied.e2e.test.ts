import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { DEFAULT_LISTENER_ID, DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { prodImage, stopPromotion } from "../support/promotion-repo.js";
import { environmentDoc, plain, PROD_KEY, runCommand, STAGING_KEY, type TwoPlanes } from "./two-planes.js";

// Checks taken before a change applied in place still counted for promotion: an external
// container's custom_url changed (the same revision) with --no-wait left the passing checks of that
// revision standing, and promote moved it on checks of another agent URL. The checks record now says
// which applied state it verified (docs/environments.md "Checks"); the gate refuses one that does
// not match the record's applied state now, and the next apply that waits verifies again.

let planes: TwoPlanes;
let dir: string;

const edge = (url: string) => `apiVersion: plumb/v1
kind: Deployment
metadata: {name: edge}
spec:
  source: external_container
  source_config:
    listener_id: ${DEFAULT_LISTENER_ID}
    listener_config: {k8s_namespace: agents}
    custom_url: ${url}
  source_revision_config: {image_uri: "img/edge:1"}
  verify:
    assistant_id: agent
    cases:
      - {name: ping, input: ping, expect_regex: "^pong$"}
${prodImage("img/edge:0")}`;

beforeAll(async () => {
  // staging self-hosted (external containers run there only), prod as usual.
  const grant = (key: string) => ({ apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }] });
  const fast = { revisionSeconds: 0, deploymentReadySeconds: 0 };
  planes = {
    staging: await startControlPlane({ ...fast, ...grant(STAGING_KEY), mode: "self-hosted" }),
    prod: await startControlPlane({ ...fast, ...grant(PROD_KEY) }),
  };
  dir = await mkdtemp(join(tmpdir(), "plumb-checks-applied-"));
  await mkdir(join(dir, "environments"));
  const staging = environmentDoc("staging").replace("mode: saas", "mode: self-hosted");
  await writeFile(join(dir, "environments", "staging.yaml"), staging);
  const gates = "  promotion: {from: staging, gates: {deployed: true, checks: {min_pass_ratio: 1}}}\n";
  await writeFile(join(dir, "environments", "prod.yaml"), environmentDoc("prod", gates));
  // host: an agent server the local control plane runs, at its custom_url, for edge to point at.
  await writeFile(join(dir, "host.yaml"), plain("host"));
  const applied = await runCommand(applyCommand, [dir, "--env", "staging", "--yes"], planes);
  if (applied.code !== 0) throw new Error(`apply --env staging failed: ${applied.out}${applied.err}`);
});

afterAll(() => stopPromotion(planes, dir));

const run = (command: typeof applyCommand | typeof promoteCommand, args: string[]) =>
  runCommand(command, args, planes).catch((e: Error) => ({ out: "", err: e.message, code: 1 }));

describe("checks of a revision changed in place since", () => {
  it("do not hold the promotion until an apply verifies the change", async () => {
    const client = api(planes.staging.url, STAGING_KEY);
    const hostUrl = (await client.deployment("host")).source_config.custom_url!;
    await writeFile(join(dir, "edge.yaml"), edge(hostUrl));
    const applied = await run(applyCommand, [dir, "--env", "staging", "--yes"]);
    expect(applied.code, applied.out + applied.err).toBe(0);
    const promote = ["promote", dir, "--to", "prod", "--target", "edge"];
    const ready = await run(promoteCommand, promote.slice(1));
    expect(ready.out + ready.err).toContain("edge: would be promoted");

    // custom_url moved in place (no new revision), not waited for: nothing verified it.
    await writeFile(join(dir, "edge.yaml"), edge("http://127.0.0.1:9/agents/elsewhere"));
    const moved = await run(applyCommand, [dir, "--env", "staging", "--yes", "--no-wait"]);
    expect(moved.code, moved.out + moved.err).toBe(0);
    const id = (await client.deployment("edge")).id;
    expect(await client.revisions(id)).toHaveLength(1);
    const blocked = await run(promoteCommand, promote.slice(1));
    expect(blocked.out + blocked.err).toContain("verified another applied state than the one recorded now");
    expect(blocked.out + blocked.err).not.toContain("would be promoted");

    // An apply that waits verifies what is applied now (here an agent URL nothing answers at).
    const verified = await run(applyCommand, [dir, "--env", "staging", "--yes"]);
    expect(verified.out + verified.err).toContain("verify");
    const judged = await run(promoteCommand, promote.slice(1));
    expect(judged.out + judged.err).toContain("0/1 passed");
  });
});
