import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";
import { startControlPlane } from "../src/control-plane/server.js";

// Leader election across machines: two controllers on two checkouts of one repository share the
// status branch, so only the lease in the git remote stands between them (their local locks differ,
// as on two pods). kill -9 of the leader; the standby must lead within 35 s (default 30 s lease).
// Measured from the kill to the standby's /readyz 200.

const exec = promisify(execFile);
const MAIN = join(process.cwd(), "dist", "src", "cli", "main.js");

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

const ready = (port: number) => async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;

export async function run(): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), "plumb-takeover-bench-"));
  const children: ChildProcess[] = [];
  const cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  try {
    const origin = join(dir, "origin.git");
    await exec("git", ["init", "--bare", "-q", "-b", "main", origin]);
    const seed = join(dir, "seed");
    await mkdir(join(seed, "deploy"), { recursive: true });
    await writeFile(
      join(seed, "deploy", "a.yaml"),
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata: { name: alpha }\nspec:\n  source: internal_container\n  source_revision_config: { image_uri: img/alpha:1 }\n",
    );
    const git = (cwd: string, ...args: string[]) =>
      exec("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd });
    await git(seed, "init", "-q", "-b", "main");
    await git(seed, "add", ".");
    await git(seed, "commit", "-qm", "m");
    await git(seed, "push", "-q", origin, "main");
    const start = async (name: string) => {
      const clone = join(dir, name);
      await exec("git", ["clone", "-q", origin, clone]);
      const port = await freePort();
      const args = ["controller", "--dir", join(clone, "deploy"), "--status-branch", "plumb-status"];
      const child = spawn(process.execPath, [MAIN, ...args, "--listen", `127.0.0.1:${port}`], {
        env: {
          ...process.env,
          PLUMB_API_URL: cp.url,
          PLUMB_API_KEY: DEFAULT_API_KEY,
          PLUMB_LOG_LEVEL: "warn",
        },
        stdio: "ignore",
      });
      children.push(child);
      return { child, port };
    };
    const leader = await start("pod-a");
    if (!(await until(ready(leader.port), 30_000))) return ["the leader never became ready"];
    const standby = await start("pod-b");
    // It answers 503 from the start; the body says "standby" once it waits for the lock.
    const role = async () =>
      ((await (await fetch(`http://127.0.0.1:${standby.port}/readyz`)).json()) as { role?: string }).role;
    await until(async () => (await role()) === "standby", 30_000);
    leader.child.kill("SIGKILL");
    const killed = performance.now();
    const took = await until(ready(standby.port), 60_000);
    const seconds = (performance.now() - killed) / 1000;
    return [
      took
        ? `standby led ${seconds.toFixed(1)} s after the leader's kill -9 (default 30 s lease; target < 35 s)`
        : "the standby did not take over within 60 s",
    ];
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
    await cp.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
