import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";
import { random } from "./chaos-support.js";

// `npm run bench -- chaos`: two controllers (the built CLI) on one status store under random events
// (issue 23 [safety], item 9 for fencing and clock skew): edits, SIGSTOP/SIGCONT of either for up to
// two leases, kill -9, and restarts under faketime ±1 h (when faketime is installed); a controller
// that exits (lock-lost) is restarted, as a supervisor would. The invariants, counted on the control
// plane: per deployment the images in revision order only go up and never repeat (no stale PATCH
// after a takeover, one revision per change); never two controllers reporting plumb_leader 1 twice
// in a row; at the end live is the last edit and its status record names live's latest revision.
// PLUMB_CHAOS_EVENTS (default 200) and PLUMB_CHAOS_SEED (default random) vary the run.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
const NAMES = ["alpha", "beta", "gamma"];
const LEASE_MS = 2_000;
const SKEWS = ["+1h", "-1h", "+60s", "-60s"];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const doc = (name: string, n: number) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/${name}:${n}\n`;
const hasFaketime = () => {
  try {
    execFileSync("faketime", ["-f", "+1h", "true"]);
    return true;
  } catch {
    return false;
  }
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

type Slot = { port: number; child: ChildProcess | null; stopped: boolean; skew: string | null };

export async function run(): Promise<string[]> {
  const events = Number(process.env.PLUMB_CHAOS_EVENTS ?? 200);
  const seed = Number(process.env.PLUMB_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const skewing = hasFaketime();
  const dir = await mkdtemp(join(tmpdir(), "plumb-chaos-leaders-"));
  const cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
  const env = {
    ...process.env,
    PLUMB_API_URL: cp.url,
    PLUMB_API_KEY: DEFAULT_API_KEY,
    PLUMB_LOG_LEVEL: "warn",
  };
  const version = new Map(NAMES.map((n) => [n, 1]));
  const violations: string[] = [];
  const counts = { edits: 0, pauses: 0, kills: 0, skewed: 0, restarts: 0 };
  const slots: Slot[] = [];
  const start = (slot: Slot) => {
    const args = [MAIN, "controller", "--dir", dir, "--listen", `127.0.0.1:${slot.port}`];
    const rest = ["--debounce", "20ms", "--poll-interval", "50ms", "--lock-lease", `${LEASE_MS}ms`];
    // faketime runs the controller as its child: each in its own process group, signalled whole.
    slot.child = slot.skew
      ? spawn("faketime", ["-f", slot.skew, process.execPath, ...args, ...rest], {
          env,
          stdio: "ignore",
          detached: true,
        })
      : spawn(process.execPath, [...args, ...rest], { env, stdio: "ignore", detached: true });
    slot.stopped = false;
  };
  const signal = (slot: Slot, sig: NodeJS.Signals) => {
    try {
      if (slot.child?.pid) process.kill(-slot.child.pid, sig);
    } catch {
      // already gone
    }
  };
  const exited = (slot: Slot) => slot.child?.exitCode !== null || slot.child?.signalCode !== null;
  const leading = async (slot: Slot) => {
    if (slot.stopped || exited(slot)) return false;
    const metrics = await fetch(`http://127.0.0.1:${slot.port}/metrics`, {
      signal: AbortSignal.timeout(1_000),
    })
      .then((r) => r.text())
      .catch(() => "");
    return /^plumb_leader 1$/m.test(metrics);
  };
  try {
    for (const name of NAMES) await writeFile(join(dir, `${name}.yaml`), doc(name, 1));
    for (let i = 0; i < 2; i++)
      slots.push({ port: await freePort(), child: null, stopped: false, skew: null });
    for (const slot of slots) start(slot);
    let twoLeadersBefore = false;
    for (let e = 0; e < events; e++) {
      const kind = pick(["edit", "edit", "edit", "pause", "kill", "skew", "wait"] as const);
      const slot = pick(slots);
      if (kind === "edit") {
        const name = pick(NAMES);
        version.set(name, version.get(name)! + 1);
        await writeFile(join(dir, `${name}.yaml`), doc(name, version.get(name)!));
        counts.edits++;
      } else if (kind === "pause" && !exited(slot)) {
        signal(slot, "SIGSTOP");
        slot.stopped = true;
        counts.pauses++;
        await sleep(next() * 2 * LEASE_MS);
        signal(slot, "SIGCONT");
        slot.stopped = false;
        await sleep(300); // a resumed leader notices its lapsed lease and exits
      } else if (kind === "kill") {
        signal(slot, "SIGKILL");
        counts.kills++;
      } else if (kind === "skew" && skewing) {
        signal(slot, "SIGTERM");
        await new Promise((resolve) => (exited(slot) ? resolve(null) : slot.child!.once("exit", resolve)));
        slot.skew = pick([...SKEWS, null]);
        counts.skewed++;
      } else await sleep(200 + next() * 600);
      await sleep(50);
      for (const s of slots)
        if (exited(s)) {
          start(s);
          counts.restarts++;
        }
      const two = (await Promise.all(slots.map(leading))).every(Boolean);
      if (two && twoLeadersBefore) violations.push(`event ${e}: two controllers report plumb_leader 1`);
      twoLeadersBefore = two;
    }
    // Settle: live reaches every last edit, then the invariants.
    const client = async <T>(path: string) =>
      (await (await fetch(`${cp.url}${path}`, { headers: { "x-api-key": DEFAULT_API_KEY } })).json()) as T;
    type Dep = {
      id: string;
      name: string;
      latest_revision_id: string | null;
      source_revision_config: { image_uri?: string };
    };
    const deadline = Date.now() + 60_000;
    let live: Dep[] = [];
    while (Date.now() < deadline) {
      live = (await client<{ resources: Dep[] }>("/v2/deployments?limit=100")).resources;
      const done = NAMES.every(
        (n) =>
          live.find((d) => d.name === n)?.source_revision_config.image_uri === `img/${n}:${version.get(n)}`,
      );
      if (done) break;
      await sleep(250);
    }
    await sleep(3 * LEASE_MS); // the leader records what it applied
    for (const name of NAMES) {
      const dep = live.find((d) => d.name === name);
      if (!dep) {
        violations.push(`${name}: not live`);
        continue;
      }
      if (dep.source_revision_config.image_uri !== `img/${name}:${version.get(name)}`)
        violations.push(
          `${name}: live ${dep.source_revision_config.image_uri}, git img/${name}:${version.get(name)}`,
        );
      type Rev = { created_at: string; source_revision_config: { image_uri?: string } };
      const revs = (await client<{ resources: Rev[] }>(`/v2/deployments/${dep.id}/revisions?limit=100`))
        .resources;
      const images = revs
        .sort((a, b) => a.created_at.localeCompare(b.created_at))
        .map((r) => Number(/:(\d+)$/.exec(r.source_revision_config.image_uri ?? "")?.[1]));
      for (let i = 1; i < images.length; i++)
        if (images[i]! <= images[i - 1]!)
          violations.push(
            `${name}: revision of :${images[i]} after :${images[i - 1]} (a stale or repeated PATCH)`,
          );
      const record = await readFile(join(dir, ".plumb", "status", `deployment.${name}.json`), "utf8").catch(
        () => "{}",
      );
      const recorded = (JSON.parse(record) as { latest_revision_id?: string }).latest_revision_id;
      if (recorded !== dep.latest_revision_id)
        violations.push(
          `${name}: record names revision ${recorded ?? "none"}, live ${dep.latest_revision_id}`,
        );
    }
    if (violations.length > 0) process.exitCode = 1;
    return [
      `seed ${seed}: ${events} events (${counts.edits} edits, ${counts.pauses} SIGSTOP/SIGCONT, ${counts.kills} kill -9, ${counts.skewed} clock-skewed restarts${skewing ? "" : ": faketime not installed"}, ${counts.restarts} restarts)`,
      `invariant violations: ${violations.length}${violations.length > 0 ? " FAIL" : " (target 0) OK"}`,
      ...violations.slice(0, 20).map((v) => `  ${v}`),
    ];
  } finally {
    for (const slot of slots) {
      signal(slot, "SIGCONT");
      signal(slot, "SIGKILL");
    }
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
