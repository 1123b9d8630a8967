import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import type { ObjectStatus } from "../../src/status/status-types.js";
import { api, container, waitFor, writeDoc } from "../controller/support.js";
import { assertBuilt } from "../support/built-cli.js";

// The built CLI as users run it: a real process, real signals, kill -9.

const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");
let cp: RunningControlPlane;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  await cp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});
afterAll(() => undefined);

type Spawned = {
  child: ChildProcess;
  url: Promise<string>;
  output: () => string;
  exited: Promise<number | null>;
};

function spawnController(extra: string[] = [], env: NodeJS.ProcessEnv = {}): Spawned {
  const child = spawn(
    process.execPath,
    [
      MAIN,
      "controller",
      "--dir",
      dir,
      "--listen",
      "127.0.0.1:0",
      "--debounce",
      "20ms",
      "--poll-interval",
      "20ms",
      ...extra,
    ],
    {
      env: {
        ...process.env,
        PLUMB_API_URL: cp.url,
        PLUMB_API_KEY: DEFAULT_API_KEY,
        PLUMB_LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const url = waitFor("controller URL", () => /"url":"(http:[^"]+)"/.exec(out)?.[1], 15_000);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, url, output: () => out, exited };
}

/** Resolves `value` after `ms`: the loser of a race against a process that should have exited. */
const timeout = <T>(ms: number, value: T) =>
  new Promise<T>((resolve) => setTimeout(() => resolve(value), ms).unref());

const names = ["one", "two", "three"];
async function setup(revisionSeconds: number) {
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-cli-"));
  cp = await startControlPlane({ revisionSeconds, deploymentReadySeconds: 0 });
  for (const name of names) await writeDoc(dir, `${name}.yaml`, container(name, `img/${name}:1`));
}

async function statusFiles() {
  const statusDir = join(dir, ".plumb", "status");
  // Records only: a write-file-atomic temporary (`NAME.json.NNN`) a kill -9 left behind is not one.
  const files = (existsSync(statusDir) ? await readdir(statusDir) : []).filter((f) => f.endsWith(".json"));
  return Promise.all(
    files.map(async (f) => JSON.parse(await readFile(join(statusDir, f), "utf8")) as ObjectStatus),
  );
}

const settled = async (url: string) =>
  ((await (await fetch(`${url}/status`)).json()) as { settled?: boolean }).settled === true;

describe("plumb controller (built CLI)", () => {
  it("after kill -9 mid-reconcile, a restart converges with no duplicate and no extra revision", async () => {
    await setup(0.3); // each revision state lasts 0.3 s: the kill lands while revisions are in flight
    const first = spawnController();
    await first.url;
    const client = api(cp.url);
    await waitFor("all created", async () => (await client.deployments()).length === 3);
    first.child.kill("SIGKILL");
    await first.exited;

    const second = spawnController();
    const url = await second.url;
    // /status says settled once every object of the first scan was reconciled (/readyz is 200 earlier).
    await waitFor("settled after restart", () => settled(url), 20_000);
    const live = await client.deployments();
    expect(live.map((d) => d.name).sort()).toEqual([...names].sort());
    for (const d of live) expect(await client.revisions(d.id)).toHaveLength(1);
    const records = await statusFiles();
    expect(
      records.map((r) => [r.name, r.sync, r.health, r.revision_status]).sort(),
      JSON.stringify(records),
    ).toEqual([...names].sort().map((n) => [n, "Synced", "Healthy", "DEPLOYED"]));
    const body = (await (await fetch(`${url}/status`)).json()) as { ready: boolean; objects: unknown[] };
    expect(body).toMatchObject({ ready: true });
    expect(body.objects).toHaveLength(3);
  }, 60_000);

  it("runs with its heap settings: restarted in place with 4 MB semi-spaces where node has process.execve", async () => {
    await setup(0);
    const run = spawnController([], { MALLOC_ARENA_MAX: undefined, MALLOC_MMAP_THRESHOLD_: undefined });
    await run.url; // logged by the restarted process: the same PID
    const cmdline = (await readFile(`/proc/${run.child.pid}/cmdline`, "utf8")).split("\0");
    const environ = (await readFile(`/proc/${run.child.pid}/environ`, "utf8")).split("\0");
    const restarts = typeof (process as { execve?: unknown }).execve === "function";
    for (const flag of ["--max-semi-space-size=4", "--optimize-for-size", "--liftoff-only"])
      expect(cmdline.includes(flag), flag).toBe(restarts);
    expect(environ.includes("MALLOC_ARENA_MAX=1")).toBe(restarts);
    expect(environ.includes("MALLOC_MMAP_THRESHOLD_=16384")).toBe(restarts);
    expect(cmdline).toContain("controller");
  });

  it("sizes itself for a small pod when told its memory limit (old generation at 5/16 of it)", async () => {
    await setup(0);
    const run = spawnController([], {
      PLUMB_MEMORY_LIMIT: "256Mi",
      MALLOC_ARENA_MAX: undefined,
      MALLOC_MMAP_THRESHOLD_: undefined,
    });
    const url = await run.url;
    const cmdline = (await readFile(`/proc/${run.child.pid}/cmdline`, "utf8")).split("\0");
    const environ = (await readFile(`/proc/${run.child.pid}/environ`, "utf8")).split("\0");
    const restarts = typeof (process as { execve?: unknown }).execve === "function";
    for (const flag of ["--max-old-space-size=80", "--max-semi-space-size=2", "--optimize-for-size"])
      expect(cmdline.includes(flag), flag).toBe(restarts);
    expect(environ.includes("MALLOC_ARENA_MAX=1")).toBe(restarts);
    expect(environ.includes("MALLOC_MMAP_THRESHOLD_=16384")).toBe(restarts);
    await waitFor("ready", async () => (await fetch(`${url}/readyz`)).status === 200, 20_000);
  }, 60_000);

  it("exits 1 with invalid-setting when PLUMB_MEMORY_LIMIT is not a memory size", async () => {
    await setup(0);
    const run = spawnController([], { PLUMB_MEMORY_LIMIT: "256MB" });
    run.url.catch(() => undefined); // it never serves
    expect(await Promise.race([run.exited, timeout(15_000, "still running")])).toBe(1);
    expect(run.output()).toContain(
      'PLUMB_MEMORY_LIMIT must be a memory size such as 268435456, 256Mi or 1Gi, not "256MB"',
    );
    expect(run.output()).toContain("[invalid-setting]");
    expect(await api(cp.url).deployments()).toEqual([]);
  });

  it("on SIGTERM stops taking work, saves status and exits 0 in bounded time", async () => {
    await setup(0.05);
    const run = spawnController(["--shutdown-grace", "5s"]);
    const url = await run.url;
    await waitFor("settled", () => settled(url), 20_000);
    await writeDoc(dir, "one.yaml", container("one", "img/one:2"));
    const started = Date.now();
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.output()).toContain("stopped; status saved");
    expect(run.output()).not.toContain(DEFAULT_API_KEY);
    expect((await statusFiles()).length).toBe(3);
  }, 60_000);

  it("exits 1 without reconciling anything when its listen port is taken", async () => {
    await setup(0.02);
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const { port } = blocker.address() as { port: number };
    try {
      const run = spawnController(["--listen", `127.0.0.1:${port}`]);
      run.url.catch(() => undefined); // it never serves
      const code = await Promise.race([run.exited, timeout(15_000, "still running")]);
      expect(code).toBe(1);
      expect(run.output()).toContain(`cannot listen on 127.0.0.1:${port}`);
      expect(run.output()).toContain("[listen-failed]");
      expect(run.output()).not.toContain('"msg":"reconciled"');
      expect(await api(cp.url).deployments()).toEqual([]);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it("exits 1 with path-not-found when the manifest directory does not exist", async () => {
    dir = await mkdtemp(join(tmpdir(), "plumb-ctl-cli-"));
    cp = await startControlPlane({});
    const missing = join(dir, "nope");
    const run = spawnController(["--dir", missing]);
    run.url.catch(() => undefined);
    const code = await Promise.race([run.exited, timeout(15_000, "still running")]);
    expect(code).toBe(1);
    expect(run.output()).toContain(
      `manifest directory ${missing} does not exist; check --dir [path-not-found]`,
    );
    expect(run.output()).not.toContain("ready");
  });

  it("refuses bad usage with exit 64", async () => {
    dir = await mkdtemp(join(tmpdir(), "plumb-ctl-cli-"));
    cp = await startControlPlane({});
    const child = spawn(process.execPath, [MAIN, "controller"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PLUMB_API_URL: cp.url, PLUMB_API_KEY: "k" },
    });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(64);
    expect(err).toContain("--dir PATH or --repo URL");
  });
});
