import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, type CliRun, listeningPort, spawnCli } from "../support/built-cli.js";
import { api, container, waitFor, writeDoc } from "../controller/support.js";

// issue 23 [safety], a paused leader: real processes, real SIGSTOP/SIGCONT, short leases. A leader
// stopped with a PATCH waiting to be retried (a 429 that arrived after the write-ahead), or with
// status to publish, must send and publish nothing once it resumes after a standby took over:
// counted on the control plane (revisions) and on the status branch (the records it holds).

const exec = promisify(execFile);
let tmp: string;
let cp: RunningControlPlane;
const children: CliRun[] = [];
const servers: Server[] = [];
beforeAll(assertBuilt);
beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-chaos-fencing-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill("SIGCONT");
      child.child.kill("SIGKILL");
      await child.exited;
    }
  }
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r));
  await cp.stop();
  // A killed controller's git child (a push into origin.git) can still be writing an object for a
  // moment (spawnCli's child is not a group leader): retry the removal on ENOTEMPTY.
  await rm(tmp, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

const env = (apiUrl: string) => ({
  PLUMB_API_URL: apiUrl,
  PLUMB_API_KEY: DEFAULT_API_KEY,
  PLUMB_LOG_LEVEL: "info",
});

function controller(dir: string, apiUrl: string, extra: string[] = []): CliRun {
  const args = ["controller", "--dir", dir, "--listen", "127.0.0.1:0", "--debounce", "20ms"];
  // 6 s: a renewal every 2 s, a lapse after 4 s without one; 3 s left a loaded leader 1 s of lag
  // before it lost the lock on its own, before the test stopped it (889249d: too thin in CI).
  const run = spawnCli([...args, "--poll-interval", "20ms", "--lock-lease", "6s", ...extra], env(apiUrl));
  children.push(run);
  return run;
}

const readyz = async (port: number) => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;

const revisionsOf = async (name: string) => {
  const client = api(cp.url);
  return client.revisions((await client.deployment(name)).id);
};

/**
 * A loopback proxy to the control plane for the leader: it forwards everything, except that once
 * armed it answers the next PATCH itself with 429 Retry-After (not forwarded) and says so.
 */
async function throttlingProxy() {
  let armed = false;
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (armed && req.method === "PATCH") {
        armed = false;
        res.writeHead(429, { "content-type": "application/json", "retry-after": "3" });
        res.end(JSON.stringify({ detail: "slow down (test proxy)" }));
        onHeld();
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k)),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${cp.url}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) })
        .then(async (answer) => {
          const type = answer.headers.get("content-type");
          res.writeHead(answer.status, type ? { "content-type": type } : {});
          res.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, arm: () => (armed = true), held };
}

it("a leader stopped with a PATCH waiting to retry sends nothing after SIGCONT: one revision per change", async () => {
  const dir = join(tmp, "deploy");
  await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
  const proxy = await throttlingProxy();
  const leader = controller(dir, proxy.url);
  const portA = await listeningPort(leader);
  await waitFor("leader ready", async () => (await readyz(portA)) === 200, 20_000);
  await waitFor("alpha created", async () => (await revisionsOf("alpha")).length === 1, 20_000);
  const standby = controller(dir, cp.url);
  const portB = await listeningPort(standby);
  await waitFor("standby up", async () => (await readyz(portB)) === 503, 20_000);

  // The leader's next PATCH (after its write-ahead record) gets a 429: it waits 3 s to retry.
  proxy.arm();
  await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:2"));
  await proxy.held;
  leader.child.kill("SIGSTOP");

  // The standby sees the lease unrenewed for a lease (6 s), takes over and applies the change once.
  await waitFor("standby leads", async () => (await readyz(portB)) === 200, 40_000);
  await waitFor("applied by the new leader", async () => (await revisionsOf("alpha")).length === 2, 20_000);
  const statusFile = join(dir, ".plumb", "status", "deployment.alpha.json");
  const record = async () => JSON.parse(await readFile(statusFile, "utf8")) as Record<string, unknown>;
  const newest = (await revisionsOf("alpha"))[0]!.id;
  // Its record of that revision, finished (the old leader's record of revision 1 was Synced too).
  await waitFor("the new leader's record", async () => {
    const r = await record().catch(() => null);
    return r?.latest_revision_id === newest && r.sync === "Synced";
  });

  // Resumed past its retry time: the queued PATCH is not sent, and the old leader stops.
  leader.child.kill("SIGCONT");
  expect(await leader.exited).not.toBe(0);
  expect(leader.output()).toContain("lock-lost");
  expect(leader.output()).not.toContain("stopped; status saved");
  expect(await revisionsOf("alpha")).toHaveLength(2);
  // The record is still the new leader's: the old one wrote none after it resumed.
  expect(await record()).toMatchObject({ latest_revision_id: newest, sync: "Synced", last_error: null });
  expect(standby.child.exitCode).toBeNull();
}, 90_000);

it("a leader that lost the lease publishes nothing: the status branch keeps the new leader's records", async () => {
  const origin = join(tmp, "origin.git");
  await exec("git", ["init", "--bare", "-q", "-b", "main", origin]);
  const seed = join(tmp, "seed");
  await writeDoc(join(seed, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  const git = (cwd: string, ...args: string[]) =>
    exec("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd });
  await git(seed, "init", "-q", "-b", "main");
  await git(seed, "add", ".");
  await git(seed, "commit", "-qm", "m");
  await git(seed, "push", "-q", origin, "main");
  for (const pod of ["pod-a", "pod-b"]) await exec("git", ["clone", "-q", origin, join(tmp, pod)]);
  // A longer lease: its renewals are git pushes, slower on a busy machine (the last --lock-lease wins):
  // one every 3 s, a lapse 6 s after the last (5 s left 1.7 s, less a push that can take a second).
  const branch = ["--status-branch", "plumb-status", "--lock-lease", "9s"];
  const leader = controller(join(tmp, "pod-a", "deploy"), cp.url, branch);
  const portA = await listeningPort(leader);
  await waitFor("leader ready", async () => (await readyz(portA)) === 200, 20_000);
  await waitFor("alpha created", async () => (await revisionsOf("alpha")).length === 1, 20_000);
  const onBranch = async () => {
    await git(seed, "fetch", "-q", origin, "+plumb-status:refs/remotes/check/plumb-status");
    return (await git(seed, "show", "check/plumb-status:deploy/.plumb/status/deployment.alpha.json")).stdout;
  };
  await waitFor(
    "the leader published",
    async () => (await onBranch().catch(() => "")).includes("DEPLOYED"),
    20_000,
  );
  const standby = controller(join(tmp, "pod-b", "deploy"), cp.url, branch);
  const portB = await listeningPort(standby);
  await waitFor("standby up", async () => (await readyz(portB)) === 503, 20_000);

  leader.child.kill("SIGSTOP");
  await writeDoc(join(tmp, "pod-b", "deploy"), "a.yaml", container("alpha", "img/alpha:2"));
  await waitFor("standby leads", async () => (await readyz(portB)) === 200, 40_000);
  await waitFor("applied once", async () => (await revisionsOf("alpha")).length === 2, 40_000);
  const published = await waitFor(
    "the new leader published",
    async () => {
      const text = await onBranch().catch(() => "");
      return text.includes("img/alpha:2") && text.includes('"DEPLOYED"') ? text : null;
    },
    20_000,
  );

  leader.child.kill("SIGCONT");
  expect(await leader.exited).not.toBe(0);
  expect(leader.output()).toContain("lock-lost");
  expect(await onBranch()).toBe(published); // not replaced by the old leader's directory
  expect(await revisionsOf("alpha")).toHaveLength(2);
  expect(standby.child.exitCode).toBeNull();
}, 120_000);
