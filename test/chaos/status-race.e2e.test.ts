import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { acquireStateLock, lockTargetOf } from "../../src/lock/index.js";
import { api, container, writeDoc } from "../controller/support.js";
import { assertBuilt, runCli, spawnCli } from "../support/built-cli.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";

// Issue 23 item 7: `plumb status` and `plumb drift` refresh records only through the state lock, so
// a refresh never replaces a record an apply wrote after the refresh read the store (a lost secret
// change: the next apply would send the secret again, one more revision per deployment).

let cp: RunningControlPlane;
let proxy: HoldingProxy;
let dir: string;

beforeAll(assertBuilt);
afterEach(async () => {
  await proxy?.close();
  await cp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const names = ["one", "two", "three"];
async function setup() {
  dir = await mkdtemp(join(tmpdir(), "plumb-status-race-"));
  cp = await startControlPlane({ revisionSeconds: 0.05, deploymentReadySeconds: 0 });
  proxy = await startHoldingProxy(cp.url);
  for (const name of names)
    await writeDoc(
      dir,
      `${name}.yaml`,
      container(name, `img/${name}:1`, { secrets: [{ name: "TOKEN", valueFrom: { env: "TOKEN" } }] }),
    );
}
const env = (token: string, url = cp.url) => ({
  PLUMB_API_URL: url,
  PLUMB_API_KEY: DEFAULT_API_KEY,
  TOKEN: token,
});

async function revisionsPerDeployment(): Promise<Record<string, number>> {
  const client = api(cp.url);
  const counts: Record<string, number> = {};
  for (const d of await client.deployments()) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
}

const records = async () => {
  const statusDir = join(dir, ".plumb", "status");
  const files = (await readdir(statusDir)).filter((f) => f.endsWith(".json")).sort();
  return Promise.all(files.map((f) => readFile(join(statusDir, f), "utf8")));
};

describe("status and drift refresh records only under the state lock", () => {
  it("a secret change applied while `plumb status` runs is kept: one revision per change", async () => {
    await setup();
    expect((await runCli(["apply", dir, "--yes"], env("t-1"))).code).toBe(0);

    // `plumb status` has read the store and is listing live (held there).
    const held = proxy.hold((m, u) => m === "GET" && u.startsWith("/v2/deployments?"));
    const status = spawnCli(["status", dir], env("t-1", proxy.url));
    const listing = await held;
    // An apply of a new secret value at that moment: refused while status holds the lock
    // (before the fix it ran, and status then wrote back the fingerprints it had read).
    const during = await runCli(["apply", dir, "--yes"], env("t-2"));
    await listing.forward();
    expect(await status.exited, status.output()).toBe(0);
    if (during.code !== 0) {
      expect(during.output).toContain("[state-locked]");
      expect((await runCli(["apply", dir, "--yes", "--lock-timeout", "30s"], env("t-2"))).code).toBe(0);
    }

    const again = await runCli(["apply", dir, "--yes"], env("t-2"));
    expect(again.code, again.output).toBe(0);
    expect(again.output).toContain("No changes");
    expect(await revisionsPerDeployment()).toEqual({ one: 2, two: 2, three: 2 });
  }, 60_000);

  it("drift and status while another writer holds the lock report only: no record written", async () => {
    await setup();
    expect((await runCli(["apply", dir, "--yes"], env("t-1"))).code).toBe(0);
    await api(cp.url).call("PATCH", `/v2/deployments/${(await api(cp.url).deployment("one")).id}`, {
      source_revision_config: { image_uri: "img/one:ui" },
    });
    const before = await records();
    const lock = await acquireStateLock(lockTargetOf({ root: dir }), { command: "test writer" });
    try {
      const drift = await runCli(["drift", dir], env("t-1"));
      expect(drift.code, drift.output).toBe(2);
      expect(drift.output).toContain("plumb drift reports only: status records not written");
      const status = await runCli(["status", dir], env("t-1"));
      expect(status.code, status.output).toBe(0);
      expect(await records()).toEqual(before);
    } finally {
      await lock.release();
    }
    // With the lock free, drift records what it saw.
    expect((await runCli(["drift", dir], env("t-1"))).code).toBe(2);
    expect(await records()).not.toEqual(before);
  }, 60_000);
});
