import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createControlPlaneClient } from "../../src/api/control-plane-client.js";
import { runApply } from "../../src/cli/sync/apply.js";
import { runDrift } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY, DEFAULT_INTEGRATION_ID } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";

// --target against the real local control plane, counting every request: a few targets are looked
// up by name (one name_contains page each), many are read with the single listing, and an unknown
// name stops before any request with the close names it might have meant.

const COUNT = 105; // more than one listing page (100)
const name = (i: number) => `tgt-${String(i).padStart(3, "0")}`;
const body = (n: string) => ({
  name: n,
  source: "gitrepo" as const,
  source_config: {
    integration_id: DEFAULT_INTEGRATION_ID,
    repo_url: `https://github.com/acme/${n}`,
    deployment_type: "dev" as const,
    build_on_push: false,
  },
  source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
});
const doc = (n: string) => {
  const { name: _name, ...spec } = body(n);
  return stringify({ apiVersion: "plumb/v1", kind: "Deployment", metadata: { name: n }, spec });
};

let cp: RunningControlPlane;
let root: string;

beforeAll(async () => {
  ({ cp, root } = await startPlane());
  const api = createControlPlaneClient({ apiUrl: cp.url, apiKey: DEFAULT_API_KEY });
  const names = Array.from({ length: COUNT }, (_, i) => name(i));
  await Promise.all(names.map((n) => api.createDeployment({ ...body(n), secrets: [] })));
  await writeFile(join(root, "all.yaml"), names.map(doc).join("---\n"));
});
afterAll(async () => {
  await cp.stop();
  await rm(root, { recursive: true, force: true });
});

function counting() {
  const requests: string[] = [];
  const fetchCounting: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    requests.push(`${init?.method ?? "GET"} ${url.pathname}?${url.searchParams.get("name_contains") ?? ""}`);
    return fetch(input, init);
  };
  return { requests, fetch: fetchCounting };
}

async function plan(args: string[]) {
  const { requests, fetch } = counting();
  let out = "";
  process.exitCode = 0;
  await planCommand({
    stdout: { write: (t: string) => (out += t) },
    stderr: { write: () => true },
    env: { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY },
    fetch,
  }).parseAsync([root, "--output", "json", ...args], { from: "user" });
  process.exitCode = 0;
  return { requests, changes: (JSON.parse(out) as { changes: { name: string; action: string }[] }).changes };
}

const targets = (names: string[]) => names.flatMap((n) => ["--target", n]);

describe("--target", () => {
  it("looks a few targets up by exact name instead of listing every deployment", async () => {
    const { requests, changes } = await plan(targets([name(1), name(42), name(104)]));
    expect(requests.sort()).toEqual([
      `GET /v2/deployments?${name(1)}`,
      `GET /v2/deployments?${name(42)}`,
      `GET /v2/deployments?${name(104)}`,
    ]);
    expect(changes.map((c) => [c.name, c.action])).toEqual([
      [name(1), "noop"],
      [name(42), "noop"],
      [name(104), "noop"],
    ]);
  });

  it("reads many targets with the single listing (two pages for 105 deployments)", async () => {
    const many = Array.from({ length: 11 }, (_, i) => name(i * 9));
    const { requests, changes } = await plan(targets(many));
    expect(requests).toEqual(["GET /v2/deployments?", "GET /v2/deployments?"]);
    expect(changes.every((c) => c.action === "noop")).toBe(true);
    expect(changes).toHaveLength(11);
  });

  it("rejects a name in no manifest before any request, suggesting close names", async () => {
    const { requests, fetch } = counting();
    await expect(
      planCommand({
        stdout: { write: () => true },
        stderr: { write: () => true },
        env: { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY },
        fetch,
      }).parseAsync([root, "--target", "tgt-O42", "--target", "nothing-like-it"], { from: "user" }),
    ).rejects.toThrow(
      // The closest name first (a letter O typed for a zero).
      /^--target "tgt-O42" matches no manifest \(metadata\.name\); did you mean "tgt-042", .*\?\n--target "nothing-like-it" matches no manifest \(metadata\.name\)$/,
    );
    expect(requests).toEqual([]);
  });

  it("drift and apply with one target read only that deployment", async () => {
    const drift = counting();
    const driftIo = captureIo(cp, { fetch: drift.fetch });
    expect(await runDrift(root, { output: "json", target: [name(7)] }, driftIo)).toBe(0);
    expect(drift.requests).toEqual([`GET /v2/deployments?${name(7)}`]);

    const apply = counting();
    const applyIo = captureIo(cp, { fetch: apply.fetch });
    expect(await runApply(root, applyFlags({ target: [name(7)], output: "json" }), applyIo)).toBe(0);
    expect(apply.requests).toEqual([`GET /v2/deployments?${name(7)}`]);
    expect(JSON.parse(applyIo.out()).results).toMatchObject([{ name: name(7), action: "noop" }]);
  });
});
