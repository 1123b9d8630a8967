import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, type CliRun, listeningPort, spawnCli } from "../support/built-cli.js";
import { api, container, waitFor, writeDoc } from "../controller/support.js";

// issue 23 [safety], clock skew: a standby whose clock runs an hour ahead (or behind) under
// faketime. It never takes the lock from a live leader (one plumb_leader 1, one revision per change),
// and takes it from a stopped one after about one lease of its own time. Skipped where faketime is
// not installed (apt-get install faketime); test/lock/lease-watch.test.ts injects the same offsets.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
// Tried three times: once, in a run of six workers, the probe failed though faketime was installed
// and both tests skipped themselves on one runtime.
const hasFaketime = [1, 2, 3].some(() => {
  try {
    execFileSync("faketime", ["-f", "+1h", "true"]);
    return true;
  } catch {
    return false;
  }
});

beforeAll(async () => {
  if (hasFaketime) assertBuilt();
}, 120_000);

/** One test's control plane, directory and controllers; the two tests run side by side. */
type Scope = { tmp: string; cp: RunningControlPlane; children: CliRun[] };

async function scope(onTestFinished: (fn: () => Promise<void>) => void): Promise<Scope> {
  const tmp = await mkdtemp(join(tmpdir(), "plumb-chaos-skew-"));
  const cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  const children: CliRun[] = [];
  onTestFinished(async () => {
    for (const child of children) {
      if (child.child.exitCode === null && child.child.signalCode === null) {
        const group = (sig: NodeJS.Signals) => {
          try {
            process.kill(-child.child.pid!, sig); // faketime's child too
          } catch {
            child.child.kill(sig); // not a group leader (spawnCli)
          }
        };
        group("SIGCONT");
        group("SIGKILL");
        await child.exited;
      }
    }
    await cp.stop();
    await rm(tmp, { recursive: true, force: true });
  });
  return { tmp, cp, children };
}

const LEASE_MS = 6_000;
const env = { PLUMB_API_URL: "", PLUMB_API_KEY: DEFAULT_API_KEY, PLUMB_LOG_LEVEL: "info", NO_COLOR: "1" };
const args = (dir: string) => [
  ...["controller", "--dir", dir, "--listen", "127.0.0.1:0", "--debounce", "20ms"],
  // 6 s: a renewal every 2 s, a lapse after 4 s without one; 3 s left a loaded leader 1 s of lag
  // before it lost the lock on its own (889249d: too thin in CI). LEASE_MS below is the same.
  ...["--poll-interval", "20ms", "--lock-lease", "6s"],
];

/** The built CLI under faketime: its wall clock `offset` off (e.g. "+1h"). */
function skewedCli({ cp, children }: Scope, offset: string, cliArgs: string[]): CliRun {
  // faketime runs the CLI as its child: a process group of their own, killed whole afterwards.
  const child = spawn("faketime", ["-f", offset, process.execPath, MAIN, ...cliArgs], {
    env: { ...process.env, ...env, PLUMB_API_URL: cp.url },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const run = { child, output: () => out, exited };
  children.push(run);
  return run;
}

const metric = async (port: number) =>
  /^plumb_leader (\d)$/m.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1];
const revisionsOf = async (cp: RunningControlPlane) => {
  const client = api(cp.url);
  return (await client.revisions((await client.deployment("alpha")).id)).length;
};

// The two offsets side by side: each waits on leases (about 18 s), computing little.
describe.concurrent("clock skew", () => {
  for (const offset of ["+1h", "-1h"])
    it.skipIf(!hasFaketime)(
      `a standby ${offset} off never takes a live leader's lock, and takes a stopped one's after about a lease`,
      async ({ expect, onTestFailed, onTestFinished }) => {
        const test = await scope(onTestFinished);
        const { cp, children } = test;
        const revisions = () => revisionsOf(cp);
        // A failure says what each controller printed and how it ended (a loaded run's standby never
        // answered /metrics within 20 s, and nothing said whether it had not started or had exited).
        onTestFailed(() => {
          for (const c of children)
            console.error(`exit ${c.child.exitCode ?? c.child.signalCode ?? "none"}:\n${c.output()}`);
        });
        const dir = join(test.tmp, "deploy");
        await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
        const leader = spawnCli(args(dir), { ...env, PLUMB_API_URL: cp.url });
        children.push(leader);
        const portA = await listeningPort(leader);
        await waitFor("leader leads", async () => (await metric(portA)) === "1", 20_000);
        await waitFor("alpha created", async () => (await revisions()) === 1, 20_000);
        const standby = skewedCli(test, offset, args(dir));
        const portB = await listeningPort(standby);
        await waitFor("standby up", async () => (await metric(portB)) === "0", 20_000);

        // With the leader alive it keeps the lock; each change gets one revision. The standby is
        // watched for a lease and a half after them: one an hour ahead or behind that read expiry off
        // its wall clock would lead within that (it takes over after one lease of unchanged renewals).
        for (let n = 2; n <= 4; n++) {
          await writeDoc(dir, "a.yaml", container("alpha", `img/alpha:${n}`));
          await waitFor(`change ${n} applied`, async () => (await revisions()) === n, 20_000);
          expect(await metric(portB)).toBe("0");
        }
        const settle = Date.now() + 1.5 * LEASE_MS;
        while (Date.now() < settle) {
          expect(await metric(portB)).toBe("0");
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        expect(await metric(portA)).toBe("1");
        expect(await revisions()).toBe(4);

        // The leader stops (as a host that hangs): about one lease later the standby leads.
        leader.child.kill("SIGSTOP");
        const stoppedAt = Date.now();
        await waitFor("standby leads", async () => (await metric(portB)) === "1", 45_000);
        const tookMs = Date.now() - stoppedAt;
        // It watched the lease (from the last renewal, up to a third of a lease before the stop); no
        // clock said "expired" (an hour off, it would lead at once).
        expect(tookMs).toBeGreaterThanOrEqual(LEASE_MS / 2);
        expect(tookMs).toBeLessThan(5 * LEASE_MS);
        await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:5"));
        await waitFor("applied by the new leader", async () => (await revisions()) === 5, 20_000);
        expect(await revisions()).toBe(5);
      },
      120_000,
    );
});
