import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, writeDoc } from "../controller/support.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";
import { runInProcess } from "../support/in-process-cli.js";

// Two `plumb apply` at once on one repository: the state lock lets one write; the other is refused
// (state-locked) or, with --lock-timeout, waits and then finds nothing left to do. The refused run
// is called in this process (a child would add only its start-up).

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
  dir = await mkdtemp(join(tmpdir(), "plumb-concurrent-"));
  cp = await startControlPlane({ revisionSeconds: 0.05, deploymentReadySeconds: 0 });
  proxy = await startHoldingProxy(cp.url);
  for (const name of names)
    await writeDoc(
      dir,
      `${name}.yaml`,
      container(name, `img/${name}:1`, { secrets: [{ name: "TOKEN", valueFrom: { env: "TOKEN" } }] }),
    );
}
const env = () => ({ PLUMB_API_URL: proxy.url, PLUMB_API_KEY: DEFAULT_API_KEY, TOKEN: "t-1" });

async function revisionsPerDeployment(): Promise<Record<string, number>> {
  const client = api(cp.url);
  const live = await client.deployments();
  const counts: Record<string, number> = {};
  for (const d of live) counts[d.name] = (await client.revisions(d.id)).length;
  return counts;
}

describe("two plumb apply runs at once", () => {
  it("the second is refused with state-locked before sending anything; --lock-timeout waits instead", async () => {
    await setup();
    const held = proxy.hold((m, u) => m === "POST" && u.startsWith("/v2/deployments"));
    const first = spawnCli(["apply", dir, "--yes"], env());
    // The first apply holds the lock and is sending (or it ended: then say why, at once).
    const request = await Promise.race([held, first.exited.then(() => null)]);
    if (!request) throw new Error(`the first apply ended before its create was seen:\n${first.output()}`);

    const refused = await runInProcess(["apply", dir, "--yes"], env());
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/held by plumb apply \(pid \d+ on .+\) since .*\[state-locked\]/);
    expect(refused.output).not.toMatch(/^\s+at /m);

    const waiting = spawnCli(["apply", dir, "--yes", "--lock-timeout", "60s"], env());
    await request.forward();
    expect(await first.exited, first.output()).toBe(0);
    expect(await waiting.exited, waiting.output()).toBe(0);
    expect(waiting.output()).toContain("No changes");

    expect((await api(cp.url).deployments()).map((d) => d.name).sort()).toEqual([...names].sort());
    expect(await revisionsPerDeployment()).toEqual({ one: 1, two: 1, three: 1 });
  }, 60_000);
});
