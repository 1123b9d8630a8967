import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { mergeSpecs } from "../../src/environment/merge-spec.js";
import { TEST_POLL } from "./reconcile-helpers.js";

// A free-form map (annotations, labels) with a key named `constructor`, `prototype` or `__proto__`
// resolves whole in an environment. The merge of an environment's layers (json-merge-patch) stopped
// at such a key and dropped it and every key after it in that map, silently: annotations
// {a, constructor, b} were applied as {a} in every environment, while the same manifest without
// environments applied all three. Applied to a real (self-hosted) control plane, counted there (a
// `__proto__` key its JSON parser refuses: only the merge is tested with one).

const KEY = "onprem-key-0123456789abcdef";
let plane: RunningControlPlane;
let dir: string;

const MANIFEST = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: agent
spec:
  source: external_container
  source_config:
    listener_id: 10000000-0000-4000-8000-000000000001
    resource_spec:
      annotations: {a: "1", constructor: "c", b: "2"}
      labels: {team: support, prototype: "p", tier: gold}
  source_revision_config: {image_uri: "img/agent:1"}
environments:
  onprem:
    spec:
      source_config:
        resource_spec:
          annotations: {b: "3", prototype: "x"}
`;

beforeAll(async () => {
  plane = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    mode: "self-hosted",
    apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }],
  });
  dir = await mkdtemp(join(tmpdir(), "plumb-merge-key-names-"));
  await writeFile(
    join(dir, "onprem.yaml"),
    `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: onprem\nspec:\n  api_url: ${plane.url}\n  api_key: {env: ONPREM_KEY}\n  mode: self-hosted\n`,
  );
  await writeFile(join(dir, "agent.yaml"), MANIFEST);
});

afterAll(async () => {
  await plane?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("an environment's merge of maps holding keys named like Object's own", () => {
  it("keeps every key, in order, and sets no prototype", () => {
    const { spec } = mergeSpecs([
      { labels: { a: "1", constructor: "c", b: "2" } },
      JSON.parse('{"labels": {"__proto__": {"polluted": "yes"}, "b": "3", "prototype": null}}') as Record<
        string,
        unknown
      >,
    ]);
    const labels = spec.labels as Record<string, unknown>;
    expect(Object.keys(labels)).toEqual(["a", "constructor", "b", "__proto__"]);
    expect(labels.b).toBe("3");
    expect(Object.getPrototypeOf(labels)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("apply --env onprem sends every annotation and label to the control plane", async () => {
    let out = "";
    process.exitCode = 0;
    const io = {
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: () => true },
      env: { ONPREM_KEY: KEY },
      poll: TEST_POLL,
    };
    await applyCommand(io).parseAsync([dir, "--env", "onprem", "--yes"], { from: "user" });
    const code = process.exitCode;
    process.exitCode = 0;
    expect(code, out).toBe(0);
    const res = await fetch(`${plane.url}/v2/deployments`, { headers: { "x-api-key": KEY } });
    const { resources } = (await res.json()) as {
      resources: Array<{ source_config: { resource_spec: Record<string, Record<string, string>> } }>;
    };
    const spec = resources[0]!.source_config.resource_spec;
    expect(spec.annotations).toEqual({ a: "1", constructor: "c", b: "3", prototype: "x" });
    expect(spec.labels).toEqual({ team: "support", prototype: "p", tier: "gold" });
  });
});
